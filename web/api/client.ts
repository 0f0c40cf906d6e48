// The UI's one way to the API: openapi-fetch typed by schema.gen.ts (generated from our own OpenAPI document by
// `bun run gen:api`), so a changed route, field or parameter breaks `bun run typecheck`, not the user. Calls use
// the session cookie (same origin); no token is ever stored in the browser.
import createClient from "openapi-fetch";
import type { paths } from "./schema.gen";

export const api = createClient<paths>({ baseUrl: "", credentials: "same-origin" });

/** An API error: `message` is for people; `code` (supplement §2) is what the UI reacts to. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    /** Seconds, from Retry-After (429). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** Resolves an openapi-fetch call to its data, or throws ApiError with the API's own message and code. */
export async function call<T>(request: Promise<Result<T>>): Promise<T> {
  let res: Result<T>;
  try {
    res = await request;
  } catch {
    throw new ApiError(0, "The server could not be reached. Check that Secbox is running and try again.", "NETWORK");
  }
  if (res.response.ok) return res.data as T;
  const body = (res.error ?? {}) as { message?: unknown; code?: unknown };
  const retry = Number(res.response.headers.get("retry-after"));
  const message = typeof body.message === "string" && body.message !== "" ? body.message : `Request failed (HTTP ${res.response.status})`;
  throw new ApiError(
    res.response.status,
    message,
    typeof body.code === "string" ? body.code : undefined,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

const FIELD_PATH = /^([A-Za-z][\w.[\]]*): (.+)$/;
const PRIVATE_TARGETS_HINT = /\s*\(an operator can allow private targets with network\.allow_private_targets\)\.?$/;
const PRIVATE_TARGETS_SENTENCE = "An operator can allow private targets with network.allow_private_targets.";

/**
 * A refused private target (400 TARGET_NOT_ALLOWED, §27) as sentences: the API's message without its field path,
 * then how to allow such targets ("URL not allowed (private address). An operator can allow private targets with
 * network.allow_private_targets.").
 */
export function privateTargetSentence(message: string): string {
  const text = (FIELD_PATH.exec(message)?.[2] ?? message).replace(PRIVATE_TARGETS_HINT, "").replace(/\.$/, "");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}. ${PRIVATE_TARGETS_SENTENCE}`;
}

/** A run's error text (a trace, a log): a refused private target gets the same hint as the API's refusals. */
export function explainRunError(text: string): string {
  return text.includes("URL not allowed (private address)") && !text.includes("allow_private_targets")
    ? `${text.replace(/\.$/, "")}. ${PRIVATE_TARGETS_SENTENCE}`
    : text;
}

/** The message to show for any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429 && err.retryAfter) return `${err.message}. Try again in ${formatWait(err.retryAfter)}.`;
    if (err.code === "TARGET_NOT_ALLOWED") return privateTargetSentence(err.message);
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export function formatWait(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const min = Math.ceil(seconds / 60);
  return `${min} minute${min === 1 ? "" : "s"}`;
}

/**
 * The field a 400 (or 409 CONFLICT) message names ("name: must be …", "settings.statusCode: …",
 * "settings.headers[2]: …"), for showing it under that form field; undefined when it names none.
 */
export function errorField(err: unknown): { field: string; message: string } | undefined {
  if (!(err instanceof ApiError) || (err.status !== 400 && err.status !== 409)) return undefined;
  const m = FIELD_PATH.exec(err.message);
  if (!m) return undefined;
  return { field: m[1]!, message: err.code === "TARGET_NOT_ALLOWED" ? privateTargetSentence(m[2]!) : m[2]! };
}
