// The wire shapes of the script library (supplement §8): the one declaration of each (TypeBox: the OpenAPI document
// and the web types come from it); the TypeScript types are their `Static`. Responders and trackers import
// ScriptWarnings (§27) from here.
import { Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { listQueryParams } from "../../platform/http/list-query";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import { MAX_SCRIPT_BYTES, MAX_SCRIPT_NAME, SCRIPT_CONTEXTS, SCRIPT_TYPES } from "./shared-rules";

export type ScriptType = (typeof SCRIPT_TYPES)[number];
export type ScriptContextName = keyof typeof SCRIPT_CONTEXTS;
/** The list's sort keys (the common list query's `sort` allow-list). */
export const SCRIPT_SORT_KEYS = ["name", "createdAt", "updatedAt", "scriptType"] as const;

const ScriptTypeEnum = StringEnum(SCRIPT_TYPES, { description: "script kind; immutable after creation" });
const Content = T.String({
  minLength: 1,
  description: `1..${MAX_SCRIPT_BYTES} UTF-8 bytes; a syntax error does not refuse the save, it comes back in \`warnings\``,
});
/** §27: syntax errors of the scripts a save compiled (responders, trackers and the library share it). */
export const ScriptWarnings = T.Array(T.String(), {
  description:
    "syntax errors found when the save compiled its scripts as they will run (omitted when none), `<field>: SyntaxError: <message> (line L, column C)` with the line and column in your own source, e.g. \"settings.script: SyntaxError: unexpected token in expression: '}' (line 1, column 32)\"",
});
const ScriptName = T.String({ minLength: 1, description: `1..${MAX_SCRIPT_NAME} characters after trimming, unique per user` });
const Head = { id: Uuid(), name: T.String(), scriptType: ScriptTypeEnum };
const Tail = { ...TaggedMembers, createdAt: UnixTime(), updatedAt: UnixTime() };

export const UserScript = Named("UserScript", T.Object({ ...Head, content: T.String(), ...Tail }));
export type UserScript = Static<typeof UserScript>;
export const UserScriptSaved = Named(
  "UserScriptSaved",
  T.Composite([UserScript, T.Object({ warnings: T.Optional(ScriptWarnings) })], {
    description: "the script, plus `warnings` when its content does not compile",
  }),
);
export type UserScriptSaved = Static<typeof UserScriptSaved>;
export const UserScriptSummary = Named(
  "UserScriptSummary",
  T.Object(
    { ...Head, size: T.Integer({ minimum: 0, description: "content size in UTF-8 bytes" }), ...Tail },
    { description: "a list item: UserScript without content" },
  ),
);
export type UserScriptSummary = Static<typeof UserScriptSummary>;

export const ScriptContext = Named(
  "ScriptContext",
  StringEnum(Object.keys(SCRIPT_CONTEXTS), {
    description:
      "responder (responder + universal), api_tracker (api_configurator + api_extractor + universal), page_tracker (page_extractor + universal)",
  }),
);
export const ScriptListQuery = T.Object({ ...listQueryParams(SCRIPT_SORT_KEYS).properties, context: T.Optional(ScriptContext) });
export const ScriptCreateParams = Named(
  "ScriptCreateParams",
  T.Object({ name: ScriptName, scriptType: ScriptTypeEnum, content: Content, tagIds: TagIdsParam }),
);
export const ScriptUpdateParams = Named(
  "ScriptUpdateParams",
  T.Object(
    {
      name: Opt(ScriptName),
      scriptType: Opt(T.String({ description: "accepted only when equal to the stored type" })),
      content: Opt(Content),
      tagIds: TagIdsParam,
    },
    { description: "name, content and/or tagIds", minProperties: 1 },
  ),
);
