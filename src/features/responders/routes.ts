// /api/webhooks/responders: responder management, history, stats and HAR export (supplement §11.1–§11.2,
// §11.10–§11.12). Hits on responder hosts never reach these routes (RespondersService.dispatch runs first).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { RespondersService } from "./service";
import { ListQuerySchema } from "../../platform/http/list-query";

const TagRefSchema = t.Object({ id: t.String({ format: "uuid" }), name: t.String(), color: t.String() });
const HeaderPairSchema = t.Tuple([t.String(), t.String()]);
const SelectorSchema = t.Union([t.Literal("none"), t.Literal("all"), t.Object({ selected: t.Array(t.String({ format: "uuid" })) })], {
  description: 'secrets access: "none", "all" or {"selected": [secret ids]}',
});

const ResponderSchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  url: t.String({ description: "absolute live URL of the responder" }),
  location: t.Object({
    pathType: t.Union([t.Literal("="), t.Literal("^"), t.Literal("*")]),
    path: t.String(),
    subdomainPrefix: t.Optional(t.String()),
  }),
  method: t.String(),
  enabled: t.Boolean(),
  settings: t.Object({
    requestsToTrack: t.Integer(),
    statusCode: t.Integer(),
    headers: t.Optional(t.Array(HeaderPairSchema)),
    body: t.Optional(t.String()),
    script: t.Optional(t.String()),
    secrets: SelectorSchema,
    notifications: t.Optional(t.Object({ enabled: t.Boolean(), throttleSeconds: t.Integer() })),
  }),
  tags: t.Array(TagRefSchema),
  tagIds: t.Array(t.String({ format: "uuid" })),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});

const TrackedResponseSchema = t.Object({
  statusCode: t.Integer(),
  headers: t.Array(HeaderPairSchema),
  body: t.Optional(t.String({ description: "base64 of the stored bytes" })),
  bodySize: t.Integer(),
  truncated: t.Boolean(),
});

const TrackedRecordSchema = t.Object({
  id: t.String({ format: "uuid" }),
  createdAt: t.Integer(),
  durationMs: t.Integer(),
  clientAddress: t.Optional(t.String()),
  method: t.String(),
  path: t.String(),
  rawQuery: t.Optional(t.String()),
  headers: t.Array(HeaderPairSchema, { description: "sorted by name; repeats joined" }),
  body: t.Optional(t.String({ description: "base64 of the stored bytes (cut at max_tracked_body_bytes)" })),
  bodySize: t.Integer({ description: "original size" }),
  response: t.Optional(TrackedResponseSchema),
});

const StatsSchema = t.Object({ responderId: t.String({ format: "uuid" }), requestCount: t.Integer(), lastRequestedAt: t.Optional(t.Integer()) });

// Loose types: the service produces the spec's messages and codes (supplement §11.2).
const ParamsBody = t.Object({
  name: t.Optional(t.Unknown({ description: "1..100 characters after trimming, unique per user" })),
  location: t.Optional(
    t.Unknown({ description: '{pathType: "=" | "^" | "*", path: "/…" (RFC 3986 path, ≤ 255), subdomainPrefix?: ^[a-z0-9]([a-z0-9-]{0,34}[a-z0-9])?$}' }),
  ),
  method: t.Optional(t.Unknown({ description: "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, CONNECT, TRACE or ANY (default)" })),
  enabled: t.Optional(t.Unknown({ description: "default true" })),
  settings: t.Optional(
    t.Unknown({
      description:
        "{requestsToTrack (0..tier max), statusCode (200..599), headers: [[name, value]], body (≤ 1 MiB), script (≤ 51,200 bytes) | null, secrets selector, notifications {enabled, throttleSeconds?}}",
    }),
  ),
  tagIds: t.Optional(t.Unknown({ description: "ids of the caller's tags (at most 10)" })),
});

const IdParams = t.Object({ responder_id: t.String() });
const ListQuery = t.Object({
  ...ListQuerySchema.properties,
  sort: t.Optional(t.String({ description: "name (default), createdAt, updatedAt or lastRequestedAt" })),
});

const detail = (summary: string) => ({ tags: ["webhooks"], summary });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface RespondersRoutesDeps {
  auth: AuthPlugin;
  responders: RespondersService;
}

export const respondersRoutes = ({ auth, responders }: RespondersRoutesDeps) =>
  new Elysia({ name: "feature/responders" })
    .use(auth)
    .get("/api/webhooks/responders", ({ user, query }) => responders.list(user, query), {
      auth: "user",
      query: ListQuery,
      response: t.Object({ items: t.Array(ResponderSchema), total: t.Integer() }),
      detail: detail("List responders (common list query; sort also by lastRequestedAt)"),
    })
    .post(
      "/api/webhooks/responders",
      async ({ user, body, set }) => {
        const created = await responders.create(user, body);
        set.status = 201;
        return created;
      },
      { auth: "user", body: ParamsBody, response: { 201: ResponderSchema }, detail: detail("Create a responder") },
    )
    .get("/api/webhooks/responders/_stats", ({ user }) => responders.stats(user), {
      auth: "user",
      response: t.Array(StatsSchema),
      detail: detail("Stored request count and last request time per responder"),
    })
    .get("/api/webhooks/responders/:responder_id", ({ user, params }) => responders.get(user, params.responder_id), {
      auth: "user",
      params: IdParams,
      response: ResponderSchema,
      detail: detail("Get a responder"),
    })
    .put("/api/webhooks/responders/:responder_id", ({ user, params, body }) => responders.update(user, params.responder_id, body), {
      auth: "user",
      params: IdParams,
      body: ParamsBody,
      response: ResponderSchema,
      detail: detail("Update a responder (present members replace; settings is replaced as a whole)"),
    })
    .delete(
      "/api/webhooks/responders/:responder_id",
      async ({ user, params, set }) => {
        await responders.delete(user, params.responder_id);
        set.status = 204;
      },
      { auth: "user", params: IdParams, detail: detail("Delete a responder with its history and KV data") },
    )
    .get("/api/webhooks/responders/:responder_id/_history", ({ user, params }) => responders.history(user, params.responder_id), {
      auth: "user",
      params: IdParams,
      response: t.Array(TrackedRecordSchema),
      detail: detail("Tracked requests, newest first"),
    })
    .post(
      "/api/webhooks/responders/:responder_id/_clear",
      async ({ user, params, set }) => {
        await responders.clear(user, params.responder_id);
        set.status = 204;
      },
      { auth: "user", params: IdParams, detail: detail("Clear the tracked request history (KV data is kept)") },
    )
    .get(
      "/api/webhooks/responders/:responder_id/_har",
      async ({ user, params }) => {
        const { har, contentDisposition } = await responders.har(user, params.responder_id);
        return new Response(JSON.stringify(har), {
          headers: { "content-type": "application/json; charset=utf-8", "content-disposition": contentDisposition },
        });
      },
      { auth: "user", params: IdParams, detail: detail("Export the tracked history as HAR 1.2") },
    );
