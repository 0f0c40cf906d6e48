// The wire shapes of tags (supplement §6) and the tag members every taggable entity's contract shares (supplement §1
// "Tags on entities"): the one declaration of each (TypeBox: the OpenAPI document and the web types come from it);
// the TypeScript types are their `Static`. Other features import TaggedMembers, TagIdsParam and TagRef from here.
import { Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { HEX_COLOR_RE, MAX_TAGS_PER_ENTITY, TAG_COLORS, TAG_NAME_MAX } from "./shared-rules";

const COLOR = `${TAG_COLORS.join(", ")}, or a hex colour #rgb / #rrggbb (stored lower-case)`;
const Color = T.Union([StringEnum(TAG_COLORS), T.String({ pattern: HEX_COLOR_RE.source })], { description: COLOR });

export const UserTag = Named(
  "UserTag",
  T.Object({
    id: Uuid(),
    name: T.String({ minLength: 1, description: `trimmed, lower-cased, 1..${TAG_NAME_MAX} characters, unique per user` }),
    color: Color,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
export type UserTag = Static<typeof UserTag>;

/** A tag as entities show it (`tags`, same order as `tagIds`: name ascending). */
export const TagRef = Named("TagRef", T.Object({ id: Uuid(), name: T.String(), color: Color }));
export type TagRef = Static<typeof TagRef>;

/** The tag members of every taggable entity in responses. */
export const TaggedMembers = { tags: T.Array(TagRef), tagIds: T.Array(Uuid()) };
const TaggedShape = T.Object(TaggedMembers);
/** `tags` and `tagIds` of a taggable entity. */
export type Tagged = Static<typeof TaggedShape>;
/** A taggable entity's wire shape without its tags (what its store maps; TagsService.decorate adds them). */
export type Untagged<W> = Omit<W, keyof Tagged>;

/** `tagIds` in create/update requests: the caller's tag ids, at most 10 (repeats collapse). */
export const TagIdsParam = Opt(
  T.Array(Uuid(), {
    maxItems: MAX_TAGS_PER_ENTITY,
    description: `the caller's tag ids (at most ${MAX_TAGS_PER_ENTITY}); create default [], update: absent keeps, present replaces`,
  }),
);

const TagName = T.String({ minLength: 1, description: `1..${TAG_NAME_MAX} characters; trimmed and lower-cased; unique per user` });
export const TagCreateParams = Named("TagCreateParams", T.Object({ name: TagName, color: Opt(Color) }));
export const TagUpdateParams = Named(
  "TagUpdateParams",
  T.Object({ name: Opt(TagName), color: Opt(Color) }, { description: "at least one member", minProperties: 1 }),
);
