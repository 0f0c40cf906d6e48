// Routes of the api-keys feature: the caller's own keys (/api/user/api_keys, never with an API key) and the
// operator route that mints a key for any user (supplement §5, §4.2), with the schemas of contract.ts. Bodies are
// looseBody: the service checks them with the spec's messages.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, op, T } from "../../platform/http/contract";
import { ApiKeyCreateParams, ApiKeyCreateResponse, ApiKeyRegenerateParams, ApiKeyUpdateParams, UserApiKey } from "./contract";
import type { ApiKeysService } from "./service";

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
        body: looseBody(ApiKeyCreateParams),
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
      body: looseBody(ApiKeyUpdateParams),
      detail: op({
        tags,
        summary: "Rename an API key",
        body: ApiKeyUpdateParams,
        responses: { 200: UserApiKey },
        errors: { 409: ["DUPLICATE_NAME"] },
        example: { name: "ci-2" },
      }),
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
        body: looseBody(ApiKeyCreateParams),
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
