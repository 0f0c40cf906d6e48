// Certificate chain inspection for POST /api/certificates/_fetch (supplement §12.5) under the §1.1 guard:
// https only, host resolved once and checked, the TLS socket opened to the checked address with SNI = host,
// verification off (inspection only). Chain returned leaf first, as PEM.
import { isIP } from "node:net";
import tls from "node:tls";
import { MSG_CONNECT, MSG_TIMEOUT, OutboundError } from "./errors";
import { normalizeHost, parseOutboundUrl, resolveAllowed, type Resolver } from "./guard";

export interface PeerCertificatesRequest {
  url: string;
  allowPrivate: boolean;
  /** Whole operation incl. DNS and handshake; default 10,000 (§12.5). */
  timeoutMs?: number;
  resolver?: Resolver;
}

function toPem(der: Buffer): string {
  const b64 = der
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .replace(/\n$/, "");
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/**
 * Connects to an https URL and returns the server's certificate chain as PEM strings, leaf first.
 * Throws OutboundError: INVALID_URL (not https), TARGET_NOT_ALLOWED, TIMEOUT, NETWORK or TLS (connect or
 * handshake failure, or no certificate presented).
 */
export async function fetchPeerCertificates(req: PeerCertificatesRequest): Promise<string[]> {
  const url = parseOutboundUrl(req.url, true);
  const timeoutMs = req.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutboundError("TIMEOUT", MSG_TIMEOUT)), timeoutMs);
  });
  let socket: tls.TLSSocket | undefined;
  try {
    const host = normalizeHost(url.hostname);
    const address = await Promise.race([resolveAllowed(host, req.allowPrivate, req.resolver), timeout]);
    if (Date.now() >= deadline) throw new OutboundError("TIMEOUT", MSG_TIMEOUT);
    const port = url.port ? Number(url.port) : 443;
    const chain = new Promise<string[]>((resolve, reject) => {
      const s = tls.connect({
        host: address,
        port,
        ...(isIP(host) === 0 ? { servername: host } : {}),
        rejectUnauthorized: false,
      });
      socket = s;
      s.once("secureConnect", () => {
        const out: string[] = [];
        const seen = new Set<unknown>();
        let c = s.getPeerCertificate(true) as tls.DetailedPeerCertificate | undefined;
        while (c?.raw && c.raw.length > 0 && !seen.has(c) && out.length < 20) {
          seen.add(c);
          out.push(toPem(c.raw));
          if (!c.issuerCertificate || c.issuerCertificate === c) break;
          c = c.issuerCertificate;
        }
        if (out.length === 0) reject(new OutboundError("TLS", `${MSG_CONNECT}: no certificate presented`, "connect"));
        else resolve(out);
      });
      s.on("error", (err: NodeJS.ErrnoException) => {
        const code = typeof err?.code === "string" ? err.code : "";
        const tlsLike = /SSL|TLS|CERT|HANDSHAKE/i.test(code) || /ssl|tls|handshake/i.test(err?.message ?? "");
        reject(new OutboundError(tlsLike ? "TLS" : "NETWORK", `${MSG_CONNECT}${tlsLike ? ": TLS error" : ""}${code ? ` (${code})` : ""}`, "connect"));
      });
    });
    return await Promise.race([chain, timeout]);
  } finally {
    clearTimeout(timer);
    socket?.destroy();
  }
}
