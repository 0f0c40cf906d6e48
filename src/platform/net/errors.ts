// The one error type of the outbound client (supplement §1.1, §11.7). Messages start with the §11.7 texts so a
// caller may pass them through unchanged; they never contain bodies, header values or credentials.
export type OutboundErrorCode =
  | "INVALID_URL" // bad URL or scheme ("Invalid URL...")
  | "INVALID_REQUEST" // (addition) bad method, header name/value or options ("Invalid HTTP method" / "Invalid header")
  | "TARGET_NOT_ALLOWED" // private address or forbidden host name ("URL not allowed (private address)")
  | "TIMEOUT" // "Upstream request timed out"
  | "TOO_LARGE" // "Upstream response body too large" / "Upstream response header too large (more than …)"
  | "NETWORK" // "Failed to connect to upstream..." (stage connect) / "Upstream request failed..." / "Failed to decompress..." (stage upstream)
  | "TLS"; // "Failed to connect to upstream: TLS ..." (stage connect)

export type OutboundErrorStage = "connect" | "upstream";

export class OutboundError extends Error {
  readonly code: OutboundErrorCode;
  /** NETWORK/TLS only: "connect" = failed before a response arrived, "upstream" = failed while reading or decoding it. */
  readonly stage?: OutboundErrorStage;

  constructor(code: OutboundErrorCode, message: string, stage?: OutboundErrorStage) {
    super(message);
    this.name = "OutboundError";
    this.code = code;
    if (stage) this.stage = stage;
  }
}

export const MSG_BLOCKED = "URL not allowed (private address)";
export const MSG_TIMEOUT = "Upstream request timed out";
export const MSG_TOO_LARGE = "Upstream response body too large";
export const MSG_HEADER_TOO_LARGE = "Upstream response header too large";
export const MSG_CONNECT = "Failed to connect to upstream";
export const MSG_UPSTREAM = "Upstream request failed";
export const MSG_DECOMPRESS = "Failed to decompress upstream response body";
