// The API tracker pipeline (supplement §15.3, §17.5): configurator → requests in order → extractor → value.
// Compare/persist/notify belong to the tracker core. Pure apart from the two injected effects, `fetch` (platform/net)
// and `scripts` (the sandbox), so it is tested with runner result objects as data. With `trace` it also builds the
// `_debug` trace.
import type { OutboundRequest, OutboundResponse } from "../../../platform/net/client";
import { OutboundError, stripHopByHop } from "../../../platform/net/client";
import type { PhaseRecord } from "../contract";
import { cutBytes, lossyText, revisionData } from "../revisions";
import { BodyConversionError, toBodyBytes } from "./body";
import type { LogEntry, ScriptLimits, ScriptRunResult, ScriptRunner } from "../../../sandbox/types";
import { NO_SANDBOX, scriptErrorMessage } from "./scripts";
import { API_PHASES } from "../shared-rules";
import type { ApiTarget, ApiTrackerDebugResult, DebugExchange, DebugStage } from "./contract";
import { parseRequest, statusAccepted, type RunRequest } from "./target";

/** Upstream response cap of a tracker request (supplement §15.3). */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** `_test` / `_debug` bodies are cut here (supplement §17.4, §17.5, §22). */
export const DEBUG_BODY_BYTES = 512 * 1024;
export const MASK = "********";
const MAX_SCRIPT_LOGS = 100;

export interface PipelineEnv {
  fetch: (req: OutboundRequest) => Promise<OutboundResponse>;
  /** The sandbox; undefined while none is wired (a tracker with a script then fails its run). */
  scripts?: ScriptRunner;
  allowPrivate: boolean;
  scriptLimits: ScriptLimits;
  /** The tracker's owner (the sandbox pool's fair share). */
  owner?: string;
}

export interface PipelineInput {
  target: ApiTarget;
  timeoutMs: number;
  secrets: Record<string, string>;
  /** The newest revision's data; leave the key out when there is none. */
  previousContent?: unknown;
  /** Build the `_debug` trace. */
  trace?: boolean;
}

export interface ScriptResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** The `_debug` trace (ApiTrackerDebugResult, contract.ts). */
export type DebugTrace = ApiTrackerDebugResult;

export interface PipelineOutput {
  /** configurator, request, extractor (later phases are the core's). */
  phases: PhaseRecord[];
  /** The extracted value (uncut) on success. */
  value?: Uint8Array;
  error?: string;
  trace?: DebugTrace;
}

// ---- pure interpretation of script results ----

export type Interpreted<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Configurator result → the requests to send. `null`/`undefined` keeps them; `{requests: [...]}` replaces them
 * (re-validated like the target; bodies may be bytes); anything else fails the run.
 */
export function interpretConfigurator(res: ScriptRunResult, current: RunRequest[], allowPrivate: boolean): Interpreted<RunRequest[]> {
  if (!res.ok) return { ok: false, error: `Configurator failed: ${scriptErrorMessage(res.error)}` };
  const v = res.value;
  if (v === null || v === undefined) return { ok: true, value: current };
  if (typeof v !== "object" || Array.isArray(v) || !Array.isArray((v as { requests?: unknown }).requests)) {
    return { ok: false, error: "Configurator failed: the result must be {requests: [...]} or null" };
  }
  const list = (v as { requests: unknown[] }).requests;
  if (list.length < 1 || list.length > 10) return { ok: false, error: "Configurator failed: requests must have 1 to 10 requests" };
  try {
    return { ok: true, value: list.map((r, i) => parseRequest(r, `requests[${i}]`, { allowPrivate, bytesBody: true })) };
  } catch (err) {
    return { ok: false, error: `Configurator failed: ${(err as Error).message}` };
  }
}

/** Extractor result → the value; `value: undefined` = no extractor (the last response body is used). */
export function interpretExtractor(res: ScriptRunResult): Interpreted<Uint8Array | undefined> {
  if (!res.ok) return { ok: false, error: `Extractor failed: ${scriptErrorMessage(res.error)}` };
  const v = res.value;
  if (v === null || v === undefined) return { ok: true, value: undefined };
  if (typeof v !== "object" || Array.isArray(v) || ArrayBuffer.isView(v) || v instanceof ArrayBuffer || !("body" in v)) {
    return { ok: false, error: "Extractor failed: the result must be {body} or null" };
  }
  const body = (v as { body: unknown }).body;
  if (body === undefined || body === null) return { ok: false, error: "Extractor failed: the result has no body" };
  try {
    return { ok: true, value: toBodyBytes(body) };
  } catch (err) {
    if (err instanceof BodyConversionError) return { ok: false, error: `Extractor failed: ${err.message}` };
    throw err;
  }
}

/** Response headers as scripts see them: lower-case names, repeats joined with ", ", hop-by-hop removed. */
export function headersObject(list: [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [n, v] of stripHopByHop(list)) {
    const name = n.toLowerCase();
    out[name] = out[name] === undefined ? v : `${out[name]}, ${v}`;
  }
  return out;
}

// ---- debug views ----

const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

/** Byte arrays → base64 (cut at 512 KiB), everything else as is (supplement §17.5). */
export function debugView(v: unknown, depth = 0): unknown {
  if (v instanceof Uint8Array) return b64(cutBytes(v, DEBUG_BODY_BYTES));
  if (v instanceof ArrayBuffer) return b64(cutBytes(new Uint8Array(v), DEBUG_BODY_BYTES));
  if (ArrayBuffer.isView(v)) return b64(cutBytes(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), DEBUG_BODY_BYTES));
  if (depth > 64 || v === null || typeof v !== "object") return typeof v === "bigint" ? String(v) : v;
  if (Array.isArray(v)) return v.map((x) => debugView(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = debugView(x, depth + 1);
  return out;
}

const masked = (secrets: Record<string, string>) => Object.fromEntries(Object.keys(secrets).map((k) => [k, MASK]));

const scriptLogs = (logs: LogEntry[]): { level: string; message: string }[] =>
  logs.slice(0, MAX_SCRIPT_LOGS).map(({ level, message }) => ({ level, message }));

/** What `data` would show for a value (supplement §17.1), cut for display. */
export const dataView = (value: Uint8Array) => revisionData(cutBytes(value, DEBUG_BODY_BYTES));

// ---- the pipeline ----

const ms = (since: number) => Math.max(0, Math.round(performance.now() - since));

export async function runPipeline(env: PipelineEnv, input: PipelineInput): Promise<PipelineOutput> {
  const started = performance.now();
  const { target } = input;
  const phases: PhaseRecord[] = [];
  const trace: DebugTrace | undefined = input.trace ? { configurator: null, requests: [], extractor: null, result: null, elapsedMs: 0 } : undefined;
  const withPrev = "previousContent" in input ? { previousContent: input.previousContent } : {};
  const params = { secrets: { ...input.secrets } };
  const done = (out: Omit<PipelineOutput, "phases" | "trace">): PipelineOutput => {
    const ordered = API_PHASES.map((name) => phases.find((p) => p.phase === name) ?? { phase: name, durationMs: 0, status: "skipped" as const });
    if (trace) {
      trace.elapsedMs = ms(started);
      trace.result = out.value !== undefined ? { body: dataView(out.value) } : null;
    }
    return { phases: ordered, ...out, ...(trace ? { trace } : {}) };
  };
  const fail = (phase: string, t: number, error: string) => {
    phases.push({ phase, durationMs: ms(t), status: "failure", error });
    return done({ error });
  };

  // configurator
  let requests: RunRequest[] = target.requests;
  if (target.configurator !== undefined) {
    const t = performance.now();
    const context = { requests: target.requests, ...withPrev, params };
    const stage: DebugStage = { result: null, params: debugView({ ...context, params: { secrets: masked(input.secrets) } }), error: null, logs: [] };
    if (trace) trace.configurator = stage;
    if (!env.scripts) {
      stage.error = `Configurator failed: ${NO_SANDBOX}`;
      return fail("configurator", t, stage.error);
    }
    const res = await env.scripts.run({ source: target.configurator, context, limits: env.scriptLimits, proxy: false, owner: env.owner });
    stage.logs = scriptLogs(res.logs);
    if (res.ok) stage.result = debugView(res.value ?? null);
    const out = interpretConfigurator(res, requests, env.allowPrivate);
    if (!out.ok) {
      stage.error = out.error;
      return fail("configurator", t, out.error);
    }
    requests = out.value;
    phases.push({ phase: "configurator", durationMs: ms(t), status: "success" });
  }

  // requests, in order
  const tr = performance.now();
  const responses: ScriptResponse[] = [];
  for (const [i, req] of requests.entries()) {
    const exchange: DebugExchange | undefined = trace
      ? {
          request: {
            url: req.url,
            method: req.method,
            headers: req.headers,
            ...(req.body !== undefined ? { body: typeof req.body === "string" ? req.body : lossyText(req.body) } : {}),
          },
          response: { error: "" },
        }
      : undefined;
    if (exchange) trace!.requests.push(exchange);
    const t = performance.now();
    let res: OutboundResponse;
    try {
      res = await env.fetch({
        url: req.url,
        method: req.method,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        insecure: req.acceptInvalidCertificates,
        timeoutMs: input.timeoutMs,
        maxBodyBytes: MAX_RESPONSE_BYTES,
        allowPrivate: env.allowPrivate,
      });
    } catch (err) {
      const reason = err instanceof OutboundError ? err.message : "Upstream request failed";
      const error = `Request ${i + 1} failed: ${reason}`;
      if (exchange) exchange.response = { error: reason };
      return fail("request", tr, error);
    }
    const response: ScriptResponse = { status: res.status, headers: headersObject(res.headers), body: res.body };
    if (exchange) {
      exchange.response = {
        status: response.status,
        headers: response.headers,
        body: lossyText(cutBytes(res.body, DEBUG_BODY_BYTES)),
        bodySize: res.body.byteLength,
        latencyMs: ms(t),
      };
    }
    if (!statusAccepted(req, res.status)) {
      const expected = req.acceptStatuses ? `accepted: ${req.acceptStatuses.join(", ")}` : "expected 2xx";
      const error = `Request ${i + 1} returned status ${res.status} (${expected})`;
      if (exchange) exchange.response = { ...exchange.response, error } as DebugExchange["response"];
      return fail("request", tr, error);
    }
    responses.push(response);
  }
  phases.push({ phase: "request", durationMs: ms(tr), status: "success" });

  // extractor
  const last = responses[responses.length - 1]!.body;
  let value: Uint8Array = last;
  if (target.extractor !== undefined) {
    const t = performance.now();
    const context = { responses, ...withPrev, params };
    const stage: DebugStage = {
      result: null,
      params: debugView({ ...context, params: { secrets: masked(input.secrets) } }),
      error: null,
      logs: [],
    };
    if (trace) trace.extractor = stage;
    if (!env.scripts) {
      stage.error = `Extractor failed: ${NO_SANDBOX}`;
      return fail("extractor", t, stage.error);
    }
    const res = await env.scripts.run({ source: target.extractor, context, limits: env.scriptLimits, proxy: false, owner: env.owner });
    stage.logs = scriptLogs(res.logs);
    if (res.ok) stage.result = debugView(res.value ?? null);
    const out = interpretExtractor(res);
    if (!out.ok) {
      stage.error = out.error;
      return fail("extractor", t, out.error);
    }
    if (out.value !== undefined) value = out.value;
    phases.push({ phase: "extractor", durationMs: ms(t), status: "success" });
  }
  return done({ value });
}
