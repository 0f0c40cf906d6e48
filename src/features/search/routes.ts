// POST /api/search (supplement §20, §28), with the schemas of contract.ts.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, op } from "../../platform/http/contract";
import { SearchParams, SearchResults } from "./contract";
import type { SearchService } from "./service";

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
