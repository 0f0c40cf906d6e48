// Client IP for rate limits (supplement §3.3): the TCP peer, or with server.trust_proxy X-Real-IP, else the
// last X-Forwarded-For entry (the one the trusted proxy appended).
export function clientIp(request: Request, peer: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const real = request.headers.get("x-real-ip")?.trim();
    if (real) return real;
    const forwarded = request.headers.get("x-forwarded-for");
    if (forwarded) {
      const last = forwarded.split(",").map((s) => s.trim()).filter(Boolean).at(-1);
      if (last) return last;
    }
  }
  return peer ?? "unknown";
}
