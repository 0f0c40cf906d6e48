// The wire shapes of search (supplement §20): the one declaration of each (TypeBox: the OpenAPI document and the web
// types come from it); the TypeScript types are their `Static`.
import { Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { MIN_CONTENT_CHARS } from "../../platform/db/shared-rules";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS } from "./shared-rules";
import { SEARCH_TYPES } from "./specs";

const SearchType = StringEnum(SEARCH_TYPES);

export const SearchParams = Named(
  "SearchParams",
  T.Object({
    query: T.String({
      description: `trimmed, at most ${MAX_QUERY_CHARS} characters; case-insensitive substring of names, and of content from ${MIN_CONTENT_CHARS} characters on (shorter queries match names and ids only), or an exact id; empty → no items`,
    }),
    types: Opt(T.Array(SearchType, { description: "default all types" })),
    limit: Opt(T.Integer({ minimum: 1, description: `default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} become ${MAX_LIMIT}` })),
  }),
);

const SearchItem = T.Object({
  type: SearchType,
  id: Uuid(),
  name: T.String(),
  matched: StringEnum(["name", "id", "content"], { description: "content = script source, responder path or tracker URL" }),
  updatedAt: UnixTime(),
});
export type SearchItem = Static<typeof SearchItem>;

export const SearchResults = Named(
  "SearchResults",
  T.Object({
    items: T.Array(SearchItem),
    total: T.Integer({ minimum: 0, description: "all matches before limit" }),
  }),
);
export type SearchResults = Static<typeof SearchResults>;
