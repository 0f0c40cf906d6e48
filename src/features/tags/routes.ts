// /api/user/tags: tag CRUD (supplement §6, interface "User-owned resources"). Also the tag members every taggable
// entity's contract shares (supplement §1 "Tags on entities").
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, Named, op, Opt, Page, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { TAG_COLORS, type TagsService } from "./service";

const COLOR = `${TAG_COLORS.join(", ")}, or a hex colour #rgb / #rrggbb (stored lower-case)`;
const Color = T.Union([StringEnum(TAG_COLORS), T.String({ pattern: "^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$" })], { description: COLOR });

export const UserTag = Named(
  "UserTag",
  T.Object({
    id: Uuid(),
    name: T.String({ minLength: 1, description: "trimmed, lower-cased, 1..50 characters, unique per user" }),
    color: Color,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
/** A tag as entities show it (`tags`, same order as `tagIds`: name ascending). */
export const TagRef = Named("TagRef", T.Object({ id: Uuid(), name: T.String(), color: Color }));
/** The tag members of every taggable entity in responses. */
export const TaggedMembers = { tags: T.Array(TagRef), tagIds: T.Array(Uuid()) };
/** `tagIds` in create/update requests: the caller's tag ids, at most 10 (repeats collapse). */
export const TagIdsParam = Opt(T.Array(Uuid(), { maxItems: 10, description: "the caller's tag ids (at most 10); create default [], update: absent keeps, present replaces" }));

const TagName = T.String({ minLength: 1, description: "1..50 characters; trimmed and lower-cased; unique per user" });
export const TagCreateParams = Named("TagCreateParams", T.Object({ name: TagName, color: Opt(Color) }));
export const TagUpdateParams = Named(
  "TagUpdateParams",
  T.Object({ name: Opt(TagName), color: Opt(Color) }, { description: "at least one member", minProperties: 1 }),
);

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
