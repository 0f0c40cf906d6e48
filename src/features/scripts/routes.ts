// /api/user/scripts: the user's script library (supplement §8).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { Named, op, Opt, Page, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { listQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import { MAX_SCRIPT_BYTES, MAX_SCRIPT_NAME, SCRIPT_CONTEXTS, SCRIPT_SORT_KEYS, SCRIPT_TYPES, type ScriptsService } from "./service";

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
export const UserScriptSaved = Named(
  "UserScriptSaved",
  T.Composite([UserScript, T.Object({ warnings: T.Optional(ScriptWarnings) })], { description: "the script, plus `warnings` when its content does not compile" }),
);
export const UserScriptSummary = Named(
  "UserScriptSummary",
  T.Object({ ...Head, size: T.Integer({ minimum: 0, description: "content size in UTF-8 bytes" }), ...Tail }, { description: "a list item: UserScript without content" }),
);
export const ScriptContext = Named(
  "ScriptContext",
  StringEnum(Object.keys(SCRIPT_CONTEXTS), {
    description: "responder (responder + universal), api_tracker (api_configurator + api_extractor + universal), page_tracker (page_extractor + universal)",
  }),
);
const ScriptListQuery = T.Object({ ...listQueryParams(SCRIPT_SORT_KEYS).properties, context: T.Optional(ScriptContext) });
export const ScriptCreateParams = Named("ScriptCreateParams", T.Object({ name: ScriptName, scriptType: ScriptTypeEnum, content: Content, tagIds: TagIdsParam }));
export const ScriptUpdateParams = Named(
  "ScriptUpdateParams",
  T.Object(
    { name: Opt(ScriptName), scriptType: Opt(T.String({ description: "accepted only when equal to the stored type" })), content: Opt(Content), tagIds: TagIdsParam },
    { description: "name, content and/or tagIds", minProperties: 1 },
  ),
);

// Runtime schemas (Elysia checks the JSON types; the service the values, with the spec's messages).
const TYPE_ERROR = `must be one of ${SCRIPT_TYPES.join(", ")}`;
const ScriptTypeSchema = t.Union(
  [t.Literal("responder"), t.Literal("api_configurator"), t.Literal("api_extractor"), t.Literal("page_extractor"), t.Literal("universal")],
  { error: TYPE_ERROR },
);
const TagIdsSchema = t.Union([t.Array(t.String()), t.Null()]);
const ListQuery = t.Object({ ...ListQuerySchema.properties, context: t.Optional(t.String()) });
const CreateBody = t.Object({ name: t.String(), scriptType: ScriptTypeSchema, content: t.String(), tagIds: t.Optional(TagIdsSchema) });
const UpdateBody = t.Object({
  name: t.Optional(t.Union([t.String(), t.Null()])),
  scriptType: t.Optional(t.Union([ScriptTypeSchema, t.Null()], { error: TYPE_ERROR })),
  content: t.Optional(t.Union([t.String(), t.Null()])),
  tagIds: t.Optional(TagIdsSchema),
});
const IdParams = t.Object({ script_id: t.String() });
const tags = ["scripts"];

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
      detail: op({
        tags,
        summary: "List scripts (items carry size instead of content; `context` filters by compatibility)",
        query: ScriptListQuery,
        responses: { 200: Page("UserScriptSummary", UserScriptSummary) },
      }),
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
        detail: op({
          tags,
          summary: "Create a script",
          body: ScriptCreateParams,
          description: "The content is compiled as it will run (page extractors as Chromium will, the others by QuickJS), never run: a syntax error is answered in `warnings`, the script is saved anyway.",
          responses: { 201: UserScriptSaved },
          errors: { 400: ["LIMIT_REACHED"], 409: ["DUPLICATE_NAME"] },
          example: { name: "hmac-sign", scriptType: "universal", content: "return { body: context.body }" },
        }),
      },
    )
    .get("/api/user/scripts/:script_id", ({ user, params }) => scripts.get(user.id, params.script_id), {
      auth: "user",
      params: IdParams,
      detail: op({ tags, summary: "Get a script with its content", responses: { 200: UserScript } }),
    })
    .put("/api/user/scripts/:script_id", ({ user, params, body }) => scripts.update(user.id, params.script_id, body), {
      auth: "user",
      params: IdParams,
      body: UpdateBody,
      detail: op({
        tags,
        summary: "Update a script's name, content or tags",
        description: "A new content is compiled as on create: a syntax error is answered in `warnings`, the script is saved anyway.",
        body: ScriptUpdateParams,
        responses: { 200: UserScriptSaved },
        errors: { 409: ["DUPLICATE_NAME"] },
        example: { content: "return { body: 'updated' }" },
      }),
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
        detail: op({ tags, summary: "Delete a script", responses: { 204: null } }),
      },
    );
