// /api/user/scripts: the user's script library (supplement §8), with the schemas of contract.ts. Bodies are
// looseBody: the service checks them with the spec's messages.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, op, Page } from "../../platform/http/contract";
import { ListQuerySchema } from "../../platform/http/list-query";
import { ScriptCreateParams, ScriptListQuery, ScriptUpdateParams, UserScript, UserScriptSaved, UserScriptSummary } from "./contract";
import type { ScriptsService } from "./service";

const ListQuery = t.Object({ ...ListQuerySchema.properties, context: t.Optional(t.String()) });
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
        body: looseBody(ScriptCreateParams),
        detail: op({
          tags,
          summary: "Create a script",
          body: ScriptCreateParams,
          description:
            "The content is compiled as it will run (page extractors as Chromium will, the others by QuickJS), never run: a syntax error is answered in `warnings`, the script is saved anyway.",
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
      body: looseBody(ScriptUpdateParams),
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
