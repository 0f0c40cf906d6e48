// /api/user/scripts: the user's script library (supplement §8).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { ScriptsService } from "./service";
import { ListQuerySchema } from "../../platform/http/list-query";
import { MAX_SCRIPT_BYTES, SCRIPT_TYPES } from "./service";

const TYPE_ERROR = `must be one of ${SCRIPT_TYPES.join(", ")}`;
const ScriptTypeSchema = t.Union(
  [t.Literal("responder"), t.Literal("api_configurator"), t.Literal("api_extractor"), t.Literal("page_extractor"), t.Literal("universal")],
  { error: TYPE_ERROR, description: "script kind; immutable after creation" },
);
const TagRefSchema = t.Object({ id: t.String(), name: t.String(), color: t.String() });
const TagIdsSchema = t.Union([t.Array(t.String()), t.Null()], { description: "tag ids (at most 10); null = not set" });

const Head = { id: t.String(), name: t.String(), scriptType: ScriptTypeSchema };
const Tail = { tags: t.Array(TagRefSchema), tagIds: t.Array(t.String()), createdAt: t.Integer(), updatedAt: t.Integer() };
const UserScriptSchema = t.Object({ ...Head, content: t.String(), ...Tail });
const UserScriptSummarySchema = t.Object({ ...Head, size: t.Integer({ description: "content size in UTF-8 bytes" }), ...Tail });

const ListQuery = t.Object({
  ...ListQuerySchema.properties,
  sort: t.Optional(t.String({ description: "name (default), createdAt, updatedAt or scriptType" })),
  context: t.Optional(
    t.String({ description: "responder (responder+universal), api_tracker (api_configurator+api_extractor+universal), page_tracker (page_extractor+universal)" }),
  ),
});

const CreateBody = t.Object({
  name: t.String({ description: "1..128 characters after trimming, unique per user" }),
  scriptType: ScriptTypeSchema,
  content: t.String({ description: `1..${MAX_SCRIPT_BYTES} UTF-8 bytes; syntax is not checked` }),
  tagIds: t.Optional(TagIdsSchema),
});

const UpdateBody = t.Object({
  name: t.Optional(t.Union([t.String(), t.Null()])),
  scriptType: t.Optional(t.Union([ScriptTypeSchema, t.Null()], { error: TYPE_ERROR, description: "accepted only when equal to the stored type" })),
  content: t.Optional(t.Union([t.String(), t.Null()])),
  tagIds: t.Optional(TagIdsSchema),
});

const IdParams = t.Object({ script_id: t.String() });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface ScriptsRoutesDeps {
  auth: AuthPlugin;
  scripts: ScriptsService;
}

export const scriptsRoutes = ({ auth, scripts }: ScriptsRoutesDeps) =>
  new Elysia({ name: "feature/scripts" })
    .use(auth)
    .get("/api/user/scripts", ({ user, query }) => scripts.list(user.id, query), {
      auth: "user",
      query: ListQuery,
      response: t.Object({ items: t.Array(UserScriptSummarySchema), total: t.Integer() }),
      detail: { tags: ["scripts"], summary: "List scripts (items carry size instead of content)" },
    })
    .post(
      "/api/user/scripts",
      async ({ user, body, set }) => {
        const created = await scripts.create(user, body);
        set.status = 201;
        return created;
      },
      {
        auth: "user",
        body: CreateBody,
        response: { 201: UserScriptSchema },
        detail: { tags: ["scripts"], summary: "Create a script" },
      },
    )
    .get("/api/user/scripts/:script_id", ({ user, params }) => scripts.get(user.id, params.script_id), {
      auth: "user",
      params: IdParams,
      response: UserScriptSchema,
      detail: { tags: ["scripts"], summary: "Get a script with its content" },
    })
    .put("/api/user/scripts/:script_id", ({ user, params, body }) => scripts.update(user.id, params.script_id, body), {
      auth: "user",
      params: IdParams,
      body: UpdateBody,
      response: UserScriptSchema,
      detail: { tags: ["scripts"], summary: "Update a script's name, content or tags" },
    })
    .delete(
      "/api/user/scripts/:script_id",
      async ({ user, params, set }) => {
        await scripts.delete(user.id, params.script_id);
        set.status = 204;
      },
      {
        auth: "user",
        params: IdParams,
        detail: { tags: ["scripts"], summary: "Delete a script" },
      },
    );
