// The API trackers contract (interface "Web scraping: API trackers", supplement §15, §17.4, §17.5): the target (stored
// and in requests), `_test` and `_debug`, and the kind's tracker, log and bodies (trackerKindContract, ../contract.ts),
// each with its TypeScript type (`Static`). target.ts and pipeline.ts check and produce these shapes; the limits are
// ../shared-rules.ts's.
// Owns: declarations only. Must never: hold a rule's value or import a service.
import { Dict, Named, Nullable, Opt, StringEnum, T, type Static } from "../../../platform/http/contract";
import { trackerKindContract, type Loose } from "../contract";
import {
  API_MAX_REQUESTS,
  API_MAX_STATUS,
  API_METHODS,
  API_MIN_STATUS,
  API_PHASES,
  API_TIMEOUT_MS,
  CORE_PHASES,
  MAX_URL_CHARS,
} from "../shared-rules";

const Method = StringEnum(API_METHODS);
const Url = T.String({
  format: "uri",
  maxLength: MAX_URL_CHARS,
  description: "http or https URL; a literal private or local target is refused (400 TARGET_NOT_ALLOWED)",
});
const Script = T.String({ minLength: 1, description: "1..51,200 UTF-8 bytes" });
const AcceptStatuses = T.Array(T.Integer({ minimum: API_MIN_STATUS, maximum: API_MAX_STATUS }), {
  description: "(addition) statuses that count as success; default any 2xx",
});

const Request = T.Object({
  url: T.String(),
  method: Method,
  headers: Dict(T.String()),
  body: T.Optional(T.String()),
  acceptInvalidCertificates: T.Boolean(),
  acceptStatuses: T.Optional(AcceptStatuses),
});
/** A stored request (§15.1). */
export type ApiRequest = Static<typeof Request>;
export type ApiMethod = ApiRequest["method"];

const Target = T.Object({
  requests: T.Array(Request, { minItems: 1, maxItems: API_MAX_REQUESTS, description: "issued in order; index 0 is the primary request" }),
  configurator: T.Optional(T.String()),
  extractor: T.Optional(T.String()),
});
/** The stored and echoed target (target.ts parseTarget produces it). */
export type ApiTarget = Static<typeof Target>;

const RequestParam = T.Object({
  url: Url,
  method: Opt(T.Unsafe<string>({ ...Method, description: "default GET" })),
  headers: Opt(Dict(T.String(), { description: "default {}" })),
  body: Opt(T.String({ description: "sent verbatim (JSON must be pre-stringified); ≤ 1 MiB" })),
  acceptInvalidCertificates: Opt(T.Boolean({ description: "default false: disables TLS verification" })),
  acceptStatuses: Opt(AcceptStatuses),
});
const ScriptMembers = {
  configurator: Opt(T.Unsafe<string>({ ...Script, description: "script: sees context.requests, returns {requests}" })),
  extractor: Opt(T.Unsafe<string>({ ...Script, description: "script: sees context.responses, returns {body}" })),
};
export const ApiTrackerTargetParam = Named(
  "ApiTrackerTargetParam",
  T.Union(
    [
      T.Object({
        requests: T.Array(RequestParam, { minItems: 1, maxItems: API_MAX_REQUESTS, description: "issued in order; index 0 is the primary request" }),
        ...ScriptMembers,
      }),
      T.Object({ ...RequestParam.properties, ...ScriptMembers }, { description: "flat form: one request (echoed in the requests form)" }),
    ],
    { description: "the requests and the scripts" },
  ),
);

export const ApiTrackerContract = trackerKindContract({
  name: "ApiTracker",
  many: "API trackers",
  target: Target,
  targetParam: ApiTrackerTargetParam,
  timeout: {
    minimum: API_TIMEOUT_MS.min,
    maximum: API_TIMEOUT_MS.max,
    default: API_TIMEOUT_MS.default,
    description: "ms per request, 1,000..60,000",
  },
  phases: [...API_PHASES, ...CORE_PHASES],
});
export type ApiTracker = Static<typeof ApiTrackerContract.Tracker>;

export const ApiTrackerTestParams = Named(
  "ApiTrackerTestParams",
  T.Object({
    target: ApiTrackerTargetParam,
    timeout: Opt(T.Integer({ minimum: API_TIMEOUT_MS.min, maximum: API_TIMEOUT_MS.max, description: "ms, default 10,000" })),
  }),
);
export type ApiTrackerTestInput = Loose<typeof ApiTrackerTestParams>;
export const ApiTrackerTestResult = Named(
  "ApiTrackerTestResult",
  T.Object({
    status: T.Integer(),
    headers: Dict(T.String(), { description: 'lower-case names, repeats joined with ", "' }),
    body: T.String({ description: "lossy UTF-8, cut at 524,288 bytes" }),
    latencyMs: T.Integer({ minimum: 0 }),
  }),
);
export type ApiTrackerTestResult = Static<typeof ApiTrackerTestResult>;

const Logs = T.Array(T.Object({ level: T.String(), message: T.String() }), { description: "the script's console output (≤ 100 entries of ≤ 2 KiB)" });
const Stage = Nullable(
  T.Object({
    result: T.Unknown(),
    params: T.Unknown({ description: "the context given to the script (secret values as ********)" }),
    error: Nullable(T.String()),
    logs: Logs,
  }),
  { description: "null when the script is absent" },
);
const Exchange = T.Object({
  request: T.Object({ url: T.String(), method: T.String(), headers: Dict(T.String()) }, { additionalProperties: true }),
  response: T.Union([
    T.Object({ status: T.Integer(), headers: Dict(T.String()), body: T.String(), bodySize: T.Integer(), latencyMs: T.Integer() }),
    T.Object({ error: T.String() }),
  ]),
});
export const ApiTrackerDebugResult = Named(
  "ApiTrackerDebugResult",
  T.Object({
    configurator: Stage,
    requests: T.Array(Exchange),
    extractor: Stage,
    result: Nullable(T.Object({ body: T.Unknown({ description: "the value as revision data would show it" }) })),
    elapsedMs: T.Integer({ minimum: 0 }),
  }),
);
/** The `_debug` trace (pipeline.ts builds it). */
export type ApiTrackerDebugResult = Static<typeof ApiTrackerDebugResult>;
export type DebugStage = NonNullable<ApiTrackerDebugResult["configurator"]>;
export type DebugExchange = Static<typeof Exchange>;
