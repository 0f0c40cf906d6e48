// The one error type of the API and its codes (supplement §2). Services throw ApiError; the http plugin maps
// it (and Elysia's own validation/parse/not-found errors) to `{message, code}` JSON bodies.
export type ErrorCode =
  | "INVALID_JSON"
  | "BAD_CONTENT_TYPE"
  | "INVALID_INPUT"
  | "LIMIT_REACHED"
  | "TARGET_NOT_ALLOWED"
  | "UPSTREAM_FAILED"
  | "INVALID_SCHEDULE"
  | "SCHEDULE_TOO_FREQUENT"
  | "BAD_PASSPHRASE"
  | "ALGORITHM_UNAVAILABLE"
  | "BAD_PASSWORD"
  | "WEAK_PASSWORD"
  | "INVALID_TOKEN"
  | "EMAIL_TAKEN"
  | "HANDLE_TAKEN"
  | "VERIFICATION_FAILED"
  | "COOLDOWN"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_OPERATOR"
  | "API_KEY_NOT_ALLOWED"
  | "NO_USER"
  | "SIGNUP_CLOSED"
  | "NOT_ACTIVATED"
  | "SIGNUP_RESERVED"
  | "MAIL_NOT_CONFIGURED"
  | "NOT_FOUND"
  | "DUPLICATE_NAME"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "RATE_LIMITED"
  | "INSUFFICIENT_STORAGE"
  | "UNAVAILABLE"
  | "INTERNAL";

/** §27: every TARGET_NOT_ALLOWED message ends with how to allow private targets (added here, the one place). */
export const PRIVATE_TARGETS_HINT = "(an operator can allow private targets with network.allow_private_targets)";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(code === "TARGET_NOT_ALLOWED" && !message.endsWith(PRIVATE_TARGETS_HINT) ? `${message} ${PRIVATE_TARGETS_HINT}` : message);
  }

  toJSON() {
    return { message: this.message, code: this.code };
  }
}

export const invalid = (message: string, code: ErrorCode = "INVALID_INPUT") => new ApiError(400, code, message);
export const limitReached = (message: string) => new ApiError(400, "LIMIT_REACHED", message);
export const unauthenticated = (message = "Authentication required") => new ApiError(401, "UNAUTHENTICATED", message);
export const forbidden = (code: ErrorCode, message: string) => new ApiError(403, code, message);
export const notFound = (what = "Resource") => new ApiError(404, "NOT_FOUND", `${what} not found`);
export const duplicateName = (what: string, name: string) => new ApiError(409, "DUPLICATE_NAME", `${what} named "${name}" already exists`);
export const conflict = (message: string) => new ApiError(409, "CONFLICT", message);
export const tooLarge = (limit: number) => new ApiError(413, "PAYLOAD_TOO_LARGE", `Request body exceeds the limit of ${limit} bytes`);
export const rateLimited = (retryAfterSec: number, message = "Too many requests") =>
  new ApiError(429, "RATE_LIMITED", `${message}; retry in ${retryAfterSec} s`, { "retry-after": String(Math.max(1, Math.ceil(retryAfterSec))) });

/** 507: the server's free disk space is below `[server] min_free_disk_mib` (§28); writes that add data wait for room. */
export const insufficientStorage = (message = "The server is low on disk space: writes that add data are refused until space is freed") =>
  new ApiError(507, "INSUFFICIENT_STORAGE", message);

/** True when a unique-constraint violation was raised by the database (SQLite or PostgreSQL wording). */
export function isUniqueViolation(err: unknown): boolean {
  const msg = String((err as Error)?.message ?? "");
  return /UNIQUE constraint failed|duplicate key value/i.test(msg);
}
