// /api/user/secrets: secret CRUD (supplement §7, interface "User-owned resources"). Responses carry
// metadata only, never a value; the response schemas strip anything else.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { SecretsService } from "./service";
import { ListQuerySchema } from "../../platform/http/list-query";

const TagRefSchema = t.Object({ id: t.String({ format: "uuid" }), name: t.String(), color: t.String() });
const SecretSchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String({ description: "^[A-Za-z][A-Za-z0-9_-]{0,127}$, case-sensitive, immutable" }),
  tags: t.Array(TagRefSchema),
  tagIds: t.Array(t.String({ format: "uuid" })),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});
const SecretPageSchema = t.Object({ items: t.Array(SecretSchema), total: t.Integer() });

// Loose types: the service produces the spec's messages and codes.
const CreateBody = t.Object({
  name: t.Optional(t.Unknown({ description: "^[A-Za-z][A-Za-z0-9_-]{0,127}$, case-sensitive" })),
  value: t.Optional(t.Unknown({ description: "1..10,240 UTF-8 bytes; never returned" })),
  tagIds: t.Optional(t.Unknown({ description: "ids of the caller's tags (at most 10)" })),
});
const UpdateBody = t.Object({
  value: t.Optional(t.Unknown({ description: "new value, 1..10,240 UTF-8 bytes" })),
  tagIds: t.Optional(t.Unknown({ description: "replaces the tags when present" })),
  name: t.Optional(t.Unknown({ description: "immutable: must equal the stored name when sent" })),
});

const detail = (summary: string) => ({ tags: ["secrets"], summary });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface SecretsRoutesDeps {
  auth: AuthPlugin;
  secrets: SecretsService;
}

export const secretsRoutes = ({ auth, secrets }: SecretsRoutesDeps) =>
  new Elysia({ name: "feature/secrets" })
    .use(auth)
    .get("/api/user/secrets", ({ user, query }) => secrets.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: SecretPageSchema,
      detail: detail("List secrets (metadata only; common list query)"),
    })
    .post(
      "/api/user/secrets",
      async ({ user, body, set }) => {
        const secret = await secrets.create(user, body);
        set.status = 201;
        return secret;
      },
      { auth: "user", body: CreateBody, response: { 201: SecretSchema }, detail: detail("Create a secret") },
    )
    .get("/api/user/secrets/:secret_id", ({ user, params }) => secrets.get(user.id, params.secret_id), {
      auth: "user",
      response: SecretSchema,
      detail: detail("Get a secret's metadata"),
    })
    .put("/api/user/secrets/:secret_id", ({ user, params, body }) => secrets.update(user.id, params.secret_id, body), {
      auth: "user",
      body: UpdateBody,
      response: SecretSchema,
      detail: detail("Replace a secret's value and/or tags"),
    })
    .delete(
      "/api/user/secrets/:secret_id",
      async ({ user, params, set }) => {
        await secrets.delete(user.id, params.secret_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete a secret (also removes it from every secrets selector)") },
    );
