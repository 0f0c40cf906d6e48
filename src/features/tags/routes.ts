// /api/user/tags: tag CRUD (supplement §6, interface "User-owned resources"), with the schemas of contract.ts.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, op, Page } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { TagCreateParams, TagUpdateParams, UserTag } from "./contract";
import type { TagsService } from "./service";

const TAG_ERRORS = { 400: ["LIMIT_REACHED" as const], 409: ["DUPLICATE_NAME" as const] };

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
      detail: op({ tags: ["tags"], summary: "List tags (common list query)", query: ListQueryParams, responses: { 200: Page("UserTag", UserTag) } }),
    })
    .post(
      "/api/user/tags",
      async ({ user, body, set }) => {
        const tag = await tags.create(user, body);
        set.status = 201;
        return tag;
      },
      {
        auth: "user",
        body: looseBody(TagCreateParams),
        detail: op({
          tags: ["tags"],
          summary: "Create a tag",
          body: TagCreateParams,
          responses: { 201: UserTag },
          errors: TAG_ERRORS,
          example: { name: "prod", color: "danger" },
        }),
      },
    )
    .get("/api/user/tags/:tag_id", ({ user, params }) => tags.get(user.id, params.tag_id), {
      auth: "user",
      detail: op({ tags: ["tags"], summary: "Get a tag", responses: { 200: UserTag } }),
    })
    .put("/api/user/tags/:tag_id", ({ user, params, body }) => tags.update(user.id, params.tag_id, body), {
      auth: "user",
      body: looseBody(TagUpdateParams),
      detail: op({
        tags: ["tags"],
        summary: "Update a tag's name and/or colour",
        body: TagUpdateParams,
        responses: { 200: UserTag },
        errors: { 409: ["DUPLICATE_NAME"] },
        example: { color: "#ff8800" },
      }),
    })
    .delete(
      "/api/user/tags/:tag_id",
      async ({ user, params, set }) => {
        await tags.delete(user.id, params.tag_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags: ["tags"], summary: "Delete a tag (removes it from every entity)", responses: { 204: null } }) },
    );
