// POST /api/search (supplement §20, §28).
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, Named, op, Opt, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { SEARCH_TYPES, type SearchService } from "./service";

const SearchType = StringEnum(SEARCH_TYPES);

export const SearchParams = Named(
  "SearchParams",
  T.Object({
    query: T.String({
      description:
        "trimmed, at most 200 characters; case-insensitive substring of names, and of content from 3 characters on (shorter queries match names and ids only), or an exact id; empty → no items",
    }),
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
      description: "One search per user at a time: a second one while the first runs answers 429 RATE_LIMITED with Retry-After.",
      responses: { 200: SearchResults },
      errors: { 429: ["RATE_LIMITED"] },
      example: { query: "orders", types: ["responder", "apiTracker"], limit: 20 },
    }),
  });
