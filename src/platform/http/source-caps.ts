// Per-source caps (issue 29, the flood): requests in flight per client address, checked at the earliest point
// Bun.serve lets us act on a request — the entry of its fetch handler, before routing, body, auth or logging.
// Bun has no accept hook for HTTP (a connection is only seen with its first request) and does not report when a
// connection closes, so idle connections cannot be counted; a request in flight holds its connection (Bun serves
// one request per connection at a time), so this cap is also the cap on a source's busy connections.
// The excess is answered 503 with `Retry-After: 1` from one prebuilt body, never logged, after `holdMs` (nothing
// runs meanwhile, a timer only): a flooding client's surplus connections then wait instead of coming straight back,
// so the one HTTP thread's turn over the ready connections stays short for everyone else (measured:
// scripts/bench/fairness/README.md). The connection is kept (closing it would only turn the surplus into a stream
// of new connections through the listen queue, which the server's other clients share).
// The source is the TCP peer, or with `server.trust_proxy` the forwarded client address (client-ip.ts); an IPv6
// client counts by its /64. Per process: several instances each count their own.
import type { Server } from "bun";
import { clientIp, rateLimitKey } from "./client-ip";

export interface SourceCapsOptions {
  /** Requests in flight per client address; 0 = no cap. */
  maxInFlight: number;
  /** `server.trust_proxy`: the client address comes from X-Real-IP / X-Forwarded-For. */
  trustProxy: boolean;
  /** How long a refused request waits before its 503 (ms; 0 = answer at once). */
  holdMs?: number;
}

type Handler = (request: Request, server: Server<unknown>) => Response | Promise<Response>;

const REFUSED_BODY = JSON.stringify({ message: "Too many requests in progress from this client address; retry in 1 s", code: "RATE_LIMITED" });
/** Answers beyond this many held at once go out without waiting (a bound on timers and parked requests). */
const MAX_HELD = 20_000;

/** The source key of a request: the peer address (IPv4 as is, the rest through rateLimitKey), or the forwarded one. */
export function sourceKey(request: Request, server: Server<unknown>, trustProxy: boolean): string | undefined {
  const peer = server.requestIP(request)?.address;
  if (trustProxy) return rateLimitKey(clientIp(request, peer, true));
  if (peer === undefined) return undefined; // a unix socket: no address to count by
  return peer.includes(":") ? rateLimitKey(peer) : peer;
}

export class SourceCaps {
  private readonly inflight = new Map<string, number>();
  private held = 0;
  private readonly holdMs: number;
  private readonly refusedHeaders: [string, string][];

  constructor(private readonly opts: SourceCapsOptions) {
    this.holdMs = opts.holdMs ?? 0;
    this.refusedHeaders = [
      ["content-type", "application/json; charset=utf-8"],
      ["retry-after", "1"],
      ["x-content-type-options", "nosniff"],
    ];
  }

  /** The handler with the cap in front; the handler itself when the cap is off. */
  wrap(handler: Handler): Handler {
    const max = this.opts.maxInFlight;
    if (max <= 0) return handler;
    const trustProxy = this.opts.trustProxy;
    return (request, server) => {
      const key = sourceKey(request, server, trustProxy);
      if (key === undefined) return handler(request, server);
      const n = this.inflight.get(key) ?? 0;
      if (n >= max) return this.refuse();
      this.inflight.set(key, n + 1);
      let out: Response | Promise<Response>;
      try {
        out = handler(request, server);
      } catch (err) {
        this.release(key);
        throw err;
      }
      if (out instanceof Promise) return out.finally(() => this.release(key));
      this.release(key);
      return out;
    };
  }

  private release(key: string): void {
    const n = (this.inflight.get(key) ?? 1) - 1;
    if (n <= 0) this.inflight.delete(key);
    else this.inflight.set(key, n);
  }

  private refuse(): Response | Promise<Response> {
    if (this.holdMs <= 0 || this.held >= MAX_HELD) return this.refused();
    this.held++;
    return new Promise((resolve) =>
      setTimeout(() => {
        this.held--;
        resolve(this.refused());
      }, this.holdMs),
    );
  }

  private refused(): Response {
    return new Response(REFUSED_BODY, { status: 503, headers: this.refusedHeaders });
  }
}
