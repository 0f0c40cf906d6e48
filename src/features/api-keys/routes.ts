// Routes of the api-keys feature: the caller's own keys (/api/user/api_keys, never with an API key) and the
// operator route that mints a key for any user (supplement §5, §4.2).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, Named, Nullable, op, T, UnixTime, Uuid } from "../../platform/http/contract";
import type { ApiKeysService } from "./service";

const Members = {
  id: Uuid(),
  name: T.String(),
  createdAt: UnixTime(),
  updatedAt: UnixTime(),
  expiresAt: Nullable(UnixTime(), { description: "unix seconds; null = never expires" }),
  lastUsedAt: Nullable(UnixTime(), { description: "refreshed at most once per 60 s; null = never used" }),
};
export const UserApiKey = Named("UserApiKey", T.Object(Members));
export const ApiKeyCreateResponse = Named(
  "ApiKeyCreateResponse",
  T.Object({ ...Members, token: T.String({ pattern: "^sbx_ak_[0-9a-f]{64}$", description: "the plaintext token: shown only in this response" }) }),
);

const Name = T.String({ minLength: 1, description: "1 to 128 characters after trimming, unique per user" });
const ExpiresAt = T.Optional(Nullable(T.Integer({ description: "unix seconds in the future" })));
export const ApiKeyCreateParams = Named("ApiKeyCreateParams", T.Object({ name: Name, expiresAt: ExpiresAt }));
export const ApiKeyUpdateParams = Named("ApiKeyUpdateParams", T.Object({ name: Name }));
export const ApiKeyRegenerateParams = Named(
  "ApiKeyRegenerateParams",
  T.Object({
    expiresAt: T.Optional(Nullable(T.Integer(), { description: "absent keeps the current expiry, null removes it, unix seconds (in the future) replace it" })),
  }),
);

// Runtime schemas: Elysia checks that `name` is a string; the service checks the rest with the spec's messages.
const CreateBody = t.Object({ name: t.String(), expiresAt: t.Optional(t.Unknown()) });
const RenameBody = t.Object({ name: t.String() });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface ApiKeysRoutesDeps {
  auth: AuthPlugin;
  apiKeys: ApiKeysService;
}

const tags = ["api_keys"];

export const apiKeysRoutes = ({ auth, apiKeys }: ApiKeysRoutesDeps) =>
  new Elysia({ name: "feature/api-keys" })
    .use(auth)
    .get("/api/user/api_keys", ({ user }) => apiKeys.list(user.id), {
      auth: "userNoApiKey",
      detail: op({ tags, summary: "List the caller's API keys (bare array, name ascending)", responses: { 200: T.Array(UserApiKey) } }),
    })
    .post(
      "/api/user/api_keys",
      async ({ user, body, set }) => {
        const created = await apiKeys.create(user.id, body);
        set.status = 201;
        return created;
      },
      {
        auth: "userNoApiKey",
        body: CreateBody,
        detail: op({
          tags,
          summary: "Create an API key (the token is shown once)",
          body: ApiKeyCreateParams,
          responses: { 201: ApiKeyCreateResponse },
          errors: { 400: ["LIMIT_REACHED"], 409: ["DUPLICATE_NAME"] },
          example: { name: "ci" },
        }),
      },
    )
    .put("/api/user/api_keys/:api_key_id", ({ user, params, body }) => apiKeys.rename(user.id, params.api_key_id, body.name), {
      auth: "userNoApiKey",
      body: RenameBody,
      detail: op({ tags, summary: "Rename an API key", body: ApiKeyUpdateParams, responses: { 200: UserApiKey }, errors: { 409: ["DUPLICATE_NAME"] }, example: { name: "ci-2" } }),
    })
    .delete(
      "/api/user/api_keys/:api_key_id",
      async ({ user, params, set }) => {
        await apiKeys.remove(user.id, params.api_key_id);
        set.status = 204;
      },
      { auth: "userNoApiKey", detail: op({ tags, summary: "Delete an API key", responses: { 204: null } }) },
    )
    .post("/api/user/api_keys/:api_key_id/_regenerate", ({ user, params, body }) => apiKeys.regenerate(user.id, params.api_key_id, body), {
      auth: "userNoApiKey",
      body: looseBody(ApiKeyRegenerateParams),
      detail: op({
        tags,
        summary: "Issue a new token for the key (the old one stops working at once)",
        body: ApiKeyRegenerateParams,
        responses: { 200: ApiKeyCreateResponse },
      }),
    })
    .post(
      "/api/users/:user_id/api_keys",
      async ({ params, body, set }) => {
        const created = await apiKeys.createForPathUser(params.user_id, body);
        set.status = 201;
        return created;
      },
      {
        auth: "operator",
        body: CreateBody,
        detail: op({
          tags: ["users"],
          summary: "Create an API key for a user (operator)",
          body: ApiKeyCreateParams,
          responses: { 201: ApiKeyCreateResponse },
          errors: { 400: ["LIMIT_REACHED"], 409: ["DUPLICATE_NAME"] },
          example: { name: "provisioned" },
        }),
      },
    );
