// Routes of the api-keys feature: the caller's own keys (/api/user/api_keys, never with an API key) and the
// operator route that mints a key for any user (supplement §5, §4.2).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { ApiKeysService } from "./service";

const NullableInt = t.Union([t.Integer(), t.Null()]);

const UserApiKeySchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    createdAt: t.Integer(),
    updatedAt: t.Integer(),
    expiresAt: NullableInt,
    lastUsedAt: NullableInt,
  },
  { description: "UserApiKey" },
);

const ApiKeyCreateResponseSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    createdAt: t.Integer(),
    updatedAt: t.Integer(),
    expiresAt: NullableInt,
    lastUsedAt: NullableInt,
    token: t.String({ description: "sbx_ak_ + 64 hex; shown only in this response" }),
  },
  { description: "ApiKeyCreateResponse" },
);

const Name = t.String({ description: "1 to 128 characters after trimming, unique per user" });
/** Validated by the service (integer unix seconds in the future) so a wrong type gets the field's message. */
const ExpiresAt = t.Optional(t.Unknown({ description: "unix seconds in the future; absent or null = never" }));
const ApiKeyCreateParams = t.Object({ name: Name, expiresAt: ExpiresAt });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface ApiKeysRoutesDeps {
  auth: AuthPlugin;
  apiKeys: ApiKeysService;
}

export const apiKeysRoutes = ({ auth, apiKeys }: ApiKeysRoutesDeps) =>
  new Elysia({ name: "feature/api-keys" })
    .use(auth)
    .get("/api/user/api_keys", ({ user }) => apiKeys.list(user.id), {
      auth: "userNoApiKey",
      response: { 200: t.Array(UserApiKeySchema) },
      detail: { tags: ["api_keys"], summary: "List the caller's API keys (bare array, name ascending)" },
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
        body: ApiKeyCreateParams,
        response: { 201: ApiKeyCreateResponseSchema },
        detail: { tags: ["api_keys"], summary: "Create an API key (the token is shown once)" },
      },
    )
    .put("/api/user/api_keys/:api_key_id", ({ user, params, body }) => apiKeys.rename(user.id, params.api_key_id, body.name), {
      auth: "userNoApiKey",
      body: t.Object({ name: Name }),
      response: { 200: UserApiKeySchema },
      detail: { tags: ["api_keys"], summary: "Rename an API key" },
    })
    .delete(
      "/api/user/api_keys/:api_key_id",
      async ({ user, params, set }) => {
        await apiKeys.remove(user.id, params.api_key_id);
        set.status = 204;
      },
      { auth: "userNoApiKey", detail: { tags: ["api_keys"], summary: "Delete an API key" } },
    )
    .post("/api/user/api_keys/:api_key_id/_regenerate", ({ user, params, body }) => apiKeys.regenerate(user.id, params.api_key_id, body), {
      auth: "userNoApiKey",
      body: t.Object({
        expiresAt: t.Optional(t.Unknown({ description: "absent keeps the current expiry, null removes it, unix seconds replace it" })),
      }),
      response: { 200: ApiKeyCreateResponseSchema },
      detail: { tags: ["api_keys"], summary: "Issue a new token for the key (the old one stops working at once)" },
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
        body: ApiKeyCreateParams,
        response: { 201: ApiKeyCreateResponseSchema },
        detail: { tags: ["users"], summary: "Create an API key for a user (operator)" },
      },
    );
