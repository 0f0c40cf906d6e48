// The wire shapes of API keys (supplement §5): the one declaration of each (TypeBox: the OpenAPI document and the web
// types come from it); the TypeScript types are their `Static`.
import { Named, Nullable, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { API_KEY_NAME_MAX } from "./shared-rules";

const Members = {
  id: Uuid(),
  name: T.String(),
  createdAt: UnixTime(),
  updatedAt: UnixTime(),
  expiresAt: Nullable(UnixTime(), { description: "unix seconds; null = never expires" }),
  lastUsedAt: Nullable(UnixTime(), { description: "refreshed at most once per 60 s; null = never used" }),
};
export const UserApiKey = Named("UserApiKey", T.Object(Members));
export type UserApiKey = Static<typeof UserApiKey>;
export const ApiKeyCreateResponse = Named(
  "ApiKeyCreateResponse",
  T.Object({ ...Members, token: T.String({ pattern: "^sbx_ak_[0-9a-f]{64}$", description: "the plaintext token: shown only in this response" }) }),
);
export type ApiKeyCreateResponse = Static<typeof ApiKeyCreateResponse>;

const Name = T.String({ minLength: 1, description: `1 to ${API_KEY_NAME_MAX} characters after trimming, unique per user` });
const ExpiresAt = T.Optional(Nullable(T.Integer({ description: "unix seconds in the future" })));
export const ApiKeyCreateParams = Named("ApiKeyCreateParams", T.Object({ name: Name, expiresAt: ExpiresAt }));
export const ApiKeyUpdateParams = Named("ApiKeyUpdateParams", T.Object({ name: Name }));
export const ApiKeyRegenerateParams = Named(
  "ApiKeyRegenerateParams",
  T.Object({
    expiresAt: T.Optional(
      Nullable(T.Integer(), { description: "absent keeps the current expiry, null removes it, unix seconds (in the future) replace it" }),
    ),
  }),
);
