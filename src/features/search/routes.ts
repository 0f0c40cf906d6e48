// POST /api/search (supplement §20).
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, Named, op, Opt, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { SEARCH_TYPES, type SearchService } from "./service";

const SearchType = StringEnum(SEARCH_TYPES);

export const SearchParams = Named(
  "SearchParams",
  T.Object({
    query: T.String({ description: "trimmed, at most 200 characters; case-insensitive substring of names and content, or an exact id; empty → no items" }),
    types: Opt(T.Array(SearchType, { description: "default all types" })),
    limit: Opt(T.Integer({ minimum: 1, description: "default 20; values above 100 become 100" })),
  }),
);
export const SearchResults = Named(
  "SearchResults",
  T.Object({
    items: T.Array(
      T.Object({
        type: SearchType,
        id: Uuid(),
        name: T.String(),
        matched: StringEnum(["name", "id", "content"], { description: "content = script source, responder path or tracker URL" }),
        updatedAt: UnixTime(),
      }),
    ),
    total: T.Integer({ minimum: 0, description: "all matches before limit" }),
  }),
);

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface SearchRoutesDeps {
  auth: AuthPlugin;
  search: SearchService;
}

export const searchRoutes = ({ auth, search }: SearchRoutesDeps) =>
  new Elysia({ name: "feature/search" }).use(auth).post("/api/search", ({ user, body }) => search.search(user.id, body), {
    auth: "user",
    body: looseBody(SearchParams),
    detail: op({
      tags: ["search"],
      summary: "Search the caller's resources by name, id and content (names first, then ids, then content)",
      body: SearchParams,
      responses: { 200: SearchResults },
      example: { query: "orders", types: ["responder", "apiTracker"], limit: 20 },
    }),
  });
