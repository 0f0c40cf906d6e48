// The request bodies of contact messages and operator emails (supplement §21, §4.2): the one declaration of each
// (TypeBox: the OpenAPI document and the web types come from it).
import { Named, Nullable, Opt, T } from "../../platform/http/contract";
import { HTML_MAX_CHARS, MESSAGE_MAX_CHARS, SUBJECT_MAX_CHARS, TEXT_MAX_CHARS } from "./shared-rules";

const n = (v: number) => v.toLocaleString("en-US");

export const SendMessageParams = Named(
  "SendMessageParams",
  T.Object({
    message: T.String({ minLength: 1, maxLength: MESSAGE_MAX_CHARS, description: `1..${n(MESSAGE_MAX_CHARS)} characters` }),
    email: Opt(T.String({ format: "email", description: "optional reply address" })),
  }),
);
export const EmailParams = Named(
  "EmailParams",
  T.Object({
    recipient: T.String({ format: "email" }),
    subject: T.String({ minLength: 1, maxLength: SUBJECT_MAX_CHARS, description: `1..${n(SUBJECT_MAX_CHARS)} characters` }),
    text: T.String({ minLength: 1, maxLength: TEXT_MAX_CHARS, description: `1..${n(TEXT_MAX_CHARS)} characters` }),
    html: T.Optional(Nullable(T.String({ maxLength: HTML_MAX_CHARS, description: `at most ${n(HTML_MAX_CHARS)} characters` }))),
  }),
);
