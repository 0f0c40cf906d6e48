// POST /api/search (supplement §20).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { SearchService } from "./service";
import { SEARCH_TYPES } from "./service";

const TypeSchema = t.UnionEnum(SEARCH_TYPES);

// Loose types: the service checks the members and answers the spec's messages and codes.
const SearchBody = t.Object({
  query: t.Optional(t.Unknown({ description: "trimmed, at most 200 characters; case-insensitive substring of names and content, or an exact id" })),
  types: t.Optional(t.Unknown({ description: `subset of ${SEARCH_TYPES.join(", ")}; default all` })),
  limit: t.Optional(t.Unknown({ description: "default 20; values above 100 become 100" })),
});

const SearchResult = t.Object({
  items: t.Array(
    t.Object({
      type: TypeSchema,
      id: t.String({ format: "uuid" }),
      name: t.String(),
      matched: t.Union([t.Literal("name"), t.Literal("id"), t.Literal("content")], { description: "content = script source, responder path or tracker URL" }),
      updatedAt: t.Integer(),
    }),
  ),
  total: t.Integer({ description: "all matches before limit" }),
});

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface SearchRoutesDeps {
  auth: AuthPlugin;
  search: SearchService;
}

export const searchRoutes = ({ auth, search }: SearchRoutesDeps) =>
  new Elysia({ name: "feature/search" }).use(auth).post("/api/search", ({ user, body }) => search.search(user.id, body), {
    auth: "user",
    body: SearchBody,
    response: { 200: SearchResult },
    detail: { tags: ["search"], summary: "Search the caller's resources by name, id and content (names first, then ids, then content)" },
  });
