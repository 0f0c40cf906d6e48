// The responders API (supplement §11) as the pages use it, plus the UI's additions: `_info` (URL bases, tier
// limits), the `_history` window (after / before / limit) and `_test` ("Try it").
import { api, call } from "../../api/client";
import { responders as responderRules } from "../../api/rules.gen";
import type { ListQuery } from "../../api/types";

const id = (responderId: string) => ({ path: { responder_id: responderId } });

const getResponder = (responderId: string) => call(api.GET("/api/webhooks/responders/{responder_id}", { params: id(responderId) }));
/** The stored responder as the client returns it (openapi-fetch reads `[name, value]` tuples as string arrays). */
export type Responder = Awaited<ReturnType<typeof getResponder>>;

/** What create and update send: the stored shape's writable members (update replaces `settings` as a whole). */
export type ResponderPayload = Pick<Responder, "name" | "method" | "enabled" | "tagIds" | "location"> & {
  settings: Omit<Responder["settings"], "script" | "headers"> & { script?: string | null; headers?: [string, string][] };
};

export interface TryInput {
  method: TryMethod;
  path: string;
  headers: [string, string][];
  body: string;
}

export const respondersApi = {
  list: (query: ListQuery) => call(api.GET("/api/webhooks/responders", { params: { query } })),
  get: getResponder,
  create: (body: ResponderPayload) => call(api.POST("/api/webhooks/responders", { body })),
  update: (responderId: string, body: Partial<ResponderPayload>) =>
    call(api.PUT("/api/webhooks/responders/{responder_id}", { params: id(responderId), body })),
  remove: (responderId: string) => call(api.DELETE("/api/webhooks/responders/{responder_id}", { params: id(responderId) })),
  stats: () => call(api.GET("/api/webhooks/responders/_stats")),
  info: () => call(api.GET("/api/webhooks/responders/_info")),
  /** Newest first; `after` / `before` a record id, at most `limit` records. */
  history: (responderId: string, w: { after?: string; before?: string; limit?: number }, signal?: AbortSignal) =>
    call(
      api.GET("/api/webhooks/responders/{responder_id}/_history", {
        params: {
          ...id(responderId),
          query: { ...(w.after ? { after: w.after } : {}), ...(w.before ? { before: w.before } : {}), ...(w.limit ? { limit: w.limit } : {}) },
        },
        signal,
      }),
    ),
  clear: (responderId: string) => call(api.POST("/api/webhooks/responders/{responder_id}/_clear", { params: id(responderId) })),
  tryIt: (responderId: string, body: TryInput) => call(api.POST("/api/webhooks/responders/{responder_id}/_test", { params: id(responderId), body })),
  harUrl: (responderId: string) => `/api/webhooks/responders/${encodeURIComponent(responderId)}/_har`,
};

export const RESPONDERS_KEY = "responders";

/** The responder URL without its location path (the base records' paths go on, §11.12). */
export const baseOf = (r: Pick<Responder, "url" | "location">) =>
  r.url.endsWith(r.location.path) ? r.url.slice(0, r.url.length - r.location.path.length) : r.url;

/** ANY first (the editor's default), then the methods a request can have. */
export const METHODS = ["ANY", ...responderRules.STANDARD_METHODS] as const satisfies readonly Responder["method"][];
export type Method = (typeof METHODS)[number];
/** What "Try it" may send: a real request has one method (ANY is the responder's wildcard). */
export const TRY_METHODS = METHODS.filter((m): m is Exclude<Method, "ANY"> => m !== "ANY");
export type TryMethod = (typeof TRY_METHODS)[number];

export const PATH_TYPES = [
  { value: "=", label: "= exact", hint: "only this path (a trailing / does not matter; case is ignored)" },
  { value: "*", label: "* sub-paths", hint: "this path and everything below it: /orders matches /orders and /orders/7, not /ordersx" },
  { value: "^", label: "^ prefix", hint: "any path starting with this text: /api matches /api, /api/x and /apix" },
] as const;

/** Reverse-proxy headers, hidden by default in the history (supplement §11.6.1). */
export const isProxyHeader = (name: string) => name.startsWith("x-forwarded-") || name === "x-real-ip" || name === "x-replaced-path";

// Wire types as the client returns them.
type Data<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;
export type ResponderInfo = Data<typeof respondersApi.info>;
export type ResponderStats = Data<typeof respondersApi.stats>[number];
export type TrackedRecord = Data<typeof respondersApi.history>[number];
export type TryResult = Data<typeof respondersApi.tryIt>;
export type HeaderPairs = string[][];
