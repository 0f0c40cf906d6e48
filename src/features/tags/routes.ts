// /api/user/tags: tag CRUD (supplement §6, interface "User-owned resources").
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { TagsService } from "./service";
import { ListQuerySchema } from "../../platform/http/list-query";

const TagSchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String({ description: "trimmed, lower-cased, 1..50 characters, unique per user" }),
  color: t.String({ description: "default, primary, success, accent, warning, danger, or #rgb / #rrggbb" }),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});
const TagPageSchema = t.Object({ items: t.Array(TagSchema), total: t.Integer() });

// Loose types: the service produces the spec's messages and codes.
const TagBody = t.Object({
  name: t.Optional(t.Unknown({ description: "1..50 characters; trimmed and lower-cased" })),
  color: t.Optional(t.Unknown({ description: "default (default), primary, success, accent, warning, danger, #rgb or #rrggbb" })),
});

const detail = (summary: string) => ({ tags: ["tags"], summary });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface TagsRoutesDeps {
  auth: AuthPlugin;
  tags: TagsService;
}

export const tagsRoutes = ({ auth, tags }: TagsRoutesDeps) =>
  new Elysia({ name: "feature/tags" })
    .use(auth)
    .get("/api/user/tags", ({ user, query }) => tags.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: TagPageSchema,
      detail: detail("List tags (common list query)"),
    })
    .post(
      "/api/user/tags",
      async ({ user, body, set }) => {
        const tag = await tags.create(user, body);
        set.status = 201;
        return tag;
      },
      { auth: "user", body: TagBody, response: { 201: TagSchema }, detail: detail("Create a tag") },
    )
    .get("/api/user/tags/:tag_id", ({ user, params }) => tags.get(user.id, params.tag_id), {
      auth: "user",
      response: TagSchema,
      detail: detail("Get a tag"),
    })
    .put("/api/user/tags/:tag_id", ({ user, params, body }) => tags.update(user.id, params.tag_id, body), {
      auth: "user",
      body: TagBody,
      response: TagSchema,
      detail: detail("Update a tag's name and/or colour"),
    })
    .delete(
      "/api/user/tags/:tag_id",
      async ({ user, params, set }) => {
        await tags.delete(user.id, params.tag_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete a tag (removes it from every entity)") },
    );
