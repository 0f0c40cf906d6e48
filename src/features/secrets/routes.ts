// /api/user/secrets: secret CRUD (supplement §7, interface "User-owned resources"), with the schemas of contract.ts.
// Responses carry metadata only, never a value.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, op, Page } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { SecretCreateParams, SecretUpdateParams, UserSecret } from "./contract";
import type { SecretsService } from "./service";

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface SecretsRoutesDeps {
  auth: AuthPlugin;
  secrets: SecretsService;
}

const tags = ["secrets"];

export const secretsRoutes = ({ auth, secrets }: SecretsRoutesDeps) =>
  new Elysia({ name: "feature/secrets" })
    .use(auth)
    .get("/api/user/secrets", ({ user, query }) => secrets.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      detail: op({
        tags,
        summary: "List secrets (metadata only; common list query)",
        query: ListQueryParams,
        responses: { 200: Page("UserSecret", UserSecret) },
      }),
    })
    .post(
      "/api/user/secrets",
      async ({ user, body, set }) => {
        const secret = await secrets.create(user, body);
        set.status = 201;
        return secret;
      },
      {
        auth: "user",
        body: looseBody(SecretCreateParams),
        detail: op({
          tags,
          summary: "Create a secret",
          body: SecretCreateParams,
          responses: { 201: UserSecret },
          errors: { 400: ["LIMIT_REACHED"], 409: ["DUPLICATE_NAME"] },
          example: { name: "GITHUB_TOKEN", value: "ghp_example" },
        }),
      },
    )
    .get("/api/user/secrets/:secret_id", ({ user, params }) => secrets.get(user.id, params.secret_id), {
      auth: "user",
      detail: op({ tags, summary: "Get a secret's metadata", responses: { 200: UserSecret } }),
    })
    .put("/api/user/secrets/:secret_id", ({ user, params, body }) => secrets.update(user.id, params.secret_id, body), {
      auth: "user",
      body: looseBody(SecretUpdateParams),
      detail: op({
        tags,
        summary: "Replace a secret's value and/or tags",
        body: SecretUpdateParams,
        responses: { 200: UserSecret },
        example: { value: "ghp_rotated" },
      }),
    })
    .delete(
      "/api/user/secrets/:secret_id",
      async ({ user, params, set }) => {
        await secrets.delete(user.id, params.secret_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: "Delete a secret (also removes it from every secrets selector)", responses: { 204: null } }) },
    );
