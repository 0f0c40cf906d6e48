// /api/user/secrets: secret CRUD (supplement §7, interface "User-owned resources"). Responses carry metadata only,
// never a value. Also the secrets access selector (§7.1) that responders and trackers share.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, Named, op, Opt, Page, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import type { SecretsService } from "./service";

const NAME_PATTERN = "^[A-Za-z][A-Za-z0-9_-]{0,127}$";

export const UserSecret = Named(
  "UserSecret",
  T.Object({
    id: Uuid(),
    name: T.String({ pattern: NAME_PATTERN, description: "case-sensitive, immutable" }),
    ...TaggedMembers,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);

/** The selector as stored and echoed (always present in responses). */
export const SecretsSelector = Named(
  "SecretsSelector",
  T.Union([StringEnum(["none", "all"]), T.Object({ selected: T.Array(Uuid(), { minItems: 1 }) }, { required: ["selected"] })], {
    description: 'which secrets scripts see: "none", "all" (also secrets created later) or {"selected": [secret ids]}',
  }),
);
/** The selector in requests: the stored forms, secret names in `selected`, and the `{type}` forms (supplement §7.1). */
export const SecretsSelectorParam = Named(
  "SecretsSelectorParam",
  T.Union(
    [
      StringEnum(["none", "all"]),
      T.Object({ selected: T.Array(T.String({ description: "a secret id or name" })) }),
      T.Object({ type: StringEnum(["none", "all"]) }),
      T.Object({ type: StringEnum(["selected"]), secrets: T.Array(T.String({ description: "a secret id or name" })) }),
    ],
    { description: 'default "none"; every listed secret must be one of yours (400 otherwise); an empty list means "none"' },
  ),
);

const Value = T.String({ minLength: 1, description: "1..10,240 UTF-8 bytes; never returned" });
export const SecretCreateParams = Named(
  "SecretCreateParams",
  T.Object({ name: T.String({ pattern: NAME_PATTERN, description: "case-sensitive, unique per user" }), value: Value, tagIds: TagIdsParam }),
);
export const SecretUpdateParams = Named(
  "SecretUpdateParams",
  T.Object(
    { value: Opt(Value), tagIds: TagIdsParam, name: Opt(T.String({ description: "immutable: when sent it must equal the stored name" })) },
    { description: "value and/or tagIds", minProperties: 1 },
  ),
);

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
      detail: op({ tags, summary: "List secrets (metadata only; common list query)", query: ListQueryParams, responses: { 200: Page("UserSecret", UserSecret) } }),
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
      detail: op({ tags, summary: "Replace a secret's value and/or tags", body: SecretUpdateParams, responses: { 200: UserSecret }, example: { value: "ghp_rotated" } }),
    })
    .delete(
      "/api/user/secrets/:secret_id",
      async ({ user, params, set }) => {
        await secrets.delete(user.id, params.secret_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: "Delete a secret (also removes it from every secrets selector)", responses: { 204: null } }) },
    );
