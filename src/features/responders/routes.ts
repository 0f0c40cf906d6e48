// /api/webhooks/responders: responder management, history, stats and HAR export (supplement §11.1–§11.2,
// §11.10–§11.12), and three additions for the web UI: `_info` (URL bases, tier limits), a `_history` window
// (`after`, `before`, `limit`) and `_test` ("Try it", try-request.ts). Hits on responder hosts never reach these
// routes (RespondersService.dispatch runs first). The schemas are contract.ts's; bodies are read loosely (looseBody)
// and checked by the service.
import { pullStream } from "../../platform/http/stream";
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { RespondersService } from "./service";
import { looseBody, media, op, Page, T } from "../../platform/http/contract";
import { listQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { HarDocument } from "./har";
import type { Work } from "../../platform/work/pool";
import {
  Har,
  HistoryWindowQuery,
  Responder,
  ResponderInfo,
  ResponderSaved,
  RespondersCreateParams,
  ResponderStats,
  RespondersTestParams,
  ResponderTestResult,
  RespondersUpdateParams,
  TrackedRequest,
} from "./contract";

const SCRIPT_CHECKED =
  "`settings.script` is compiled as it will run, never run: a syntax error is answered in `warnings` and the responder is saved anyway.";

const ListQuery = ListQuerySchema;
const IdParams = t.Object({ responder_id: t.String() });
/** Runtime query of `_history` (values as sent); har.ts parseHistoryWindow checks them with messages naming them. */
const HistoryQuery = t.Object({ after: t.Optional(t.String()), before: t.Optional(t.String()), limit: t.Optional(t.String()) });
const RESPONDER_EXAMPLE = {
  name: "orders-mock",
  location: { pathType: "*", path: "/orders" },
  method: "GET",
  settings: { requestsToTrack: 5, statusCode: 200, headers: [["content-type", "application/json"]], body: '{"ok":true}' },
};
const tags = ["webhooks"];

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface RespondersRoutesDeps {
  auth: AuthPlugin;
  responders: RespondersService;
  /** The work pool: HAR entries are rendered there (absent: on the event loop, one entry per turn). */
  work?: Work;
}

export const respondersRoutes = ({ auth, responders, work }: RespondersRoutesDeps) =>
  new Elysia({ name: "feature/responders" })
    .use(auth)
    .get("/api/webhooks/responders", ({ user, query }) => responders.list(user, query), {
      auth: "user",
      query: ListQuery,
      detail: op({
        tags,
        summary: "List responders (common list query; sort also by lastRequestedAt)",
        query: listQueryParams(["name", "createdAt", "updatedAt", "lastRequestedAt"]),
        responses: { 200: Page("Responder", Responder) },
      }),
    })
    .post(
      "/api/webhooks/responders",
      async ({ user, body, set }) => {
        const created = await responders.create(user, body);
        set.status = 201;
        return created;
      },
      {
        auth: "user",
        body: looseBody(RespondersCreateParams),
        detail: op({
          tags,
          summary: "Create a responder",
          description: SCRIPT_CHECKED,
          body: RespondersCreateParams,
          responses: { 201: ResponderSaved },
          errors: { 400: ["LIMIT_REACHED"], 409: ["DUPLICATE_NAME", "CONFLICT"] },
          example: RESPONDER_EXAMPLE,
        }),
      },
    )
    .get("/api/webhooks/responders/_stats", ({ user }) => responders.stats(user), {
      auth: "user",
      detail: op({
        tags,
        summary: "Stored request count and last request time per responder (name ascending)",
        responses: { 200: T.Array(ResponderStats) },
      }),
    })
    .get("/api/webhooks/responders/_info", ({ user }) => responders.info(user), {
      auth: "user",
      detail: op({
        tags,
        summary: "(addition) Responder URL bases and the caller's tier limits, for an editor before a responder exists",
        responses: { 200: ResponderInfo },
      }),
    })
    .get("/api/webhooks/responders/:responder_id", ({ user, params }) => responders.get(user, params.responder_id), {
      auth: "user",
      params: IdParams,
      detail: op({ tags, summary: "Get a responder", responses: { 200: Responder } }),
    })
    .put("/api/webhooks/responders/:responder_id", ({ user, params, body }) => responders.update(user, params.responder_id, body), {
      auth: "user",
      params: IdParams,
      body: looseBody(RespondersUpdateParams),
      detail: op({
        tags,
        summary: "Update a responder (present members replace; settings is replaced as a whole)",
        description: SCRIPT_CHECKED,
        body: RespondersUpdateParams,
        responses: { 200: ResponderSaved },
        errors: { 409: ["DUPLICATE_NAME", "CONFLICT"] },
        example: { enabled: false },
      }),
    })
    .delete(
      "/api/webhooks/responders/:responder_id",
      async ({ user, params, set }) => {
        await responders.delete(user, params.responder_id);
        set.status = 204;
      },
      { auth: "user", params: IdParams, detail: op({ tags, summary: "Delete a responder with its history and KV data", responses: { 204: null } }) },
    )
    .get("/api/webhooks/responders/:responder_id/_history", ({ user, params, query }) => responders.history(user, params.responder_id, query), {
      auth: "user",
      params: IdParams,
      query: HistoryQuery,
      detail: op({
        tags,
        summary: "Tracked requests, newest first; after/before/limit (addition) select a window",
        query: HistoryWindowQuery,
        responses: { 200: T.Array(TrackedRequest) },
      }),
    })
    .post("/api/webhooks/responders/:responder_id/_test", ({ user, params, body }) => responders.tryRequest(user, params.responder_id, body), {
      auth: "user",
      params: IdParams,
      body: looseBody(RespondersTestParams),
      detail: op({
        tags,
        summary: "(addition) Send a request to your responder, served in-process as a hit (no network): its response and the record it left",
        body: RespondersTestParams,
        responses: { 200: ResponderTestResult },
        example: { path: "/orders/7?debug=1", headers: [["content-type", "application/json"]], body: '{"qty":2}' },
      }),
    })
    .post(
      "/api/webhooks/responders/:responder_id/_clear",
      async ({ user, params, set }) => {
        await responders.clear(user, params.responder_id);
        set.status = 204;
      },
      {
        auth: "user",
        params: IdParams,
        detail: op({ tags, summary: "Clear the tracked request history (KV data is kept)", responses: { 204: null } }),
      },
    )
    .get(
      "/api/webhooks/responders/:responder_id/_har",
      async ({ user, params }) => {
        const { har, contentDisposition } = await responders.har(user, params.responder_id);
        // Written while the client reads, its entries rendered on the work pool under the user's share (har.ts).
        return new Response(har instanceof HarDocument ? pullStream(har.chunks(work && { work, owner: user.id })) : JSON.stringify(har), {
          headers: { "content-type": "application/json; charset=utf-8", "content-disposition": contentDisposition },
        });
      },
      {
        auth: "user",
        params: IdParams,
        detail: op({
          tags,
          summary: "Export the tracked history as HAR 1.2 (an attachment <name>-history.har)",
          responses: {
            200: media("application/json", Har, { headers: { "Content-Disposition": { description: 'attachment; filename="<name>-history.har"' } } }),
          },
          // entries are rendered on the work pool (har.ts): its queue may be full
          errors: { 429: ["RATE_LIMITED"], 503: ["UNAVAILABLE"] },
        }),
      },
    );
