// "Copy as curl" for a captured request: the same method, URL (the responder's base + the recorded path and query),
// headers and body, as a POSIX shell command. Left out: Host and Content-Length (curl sets them from the URL and
// the body), hop-by-hop headers, and reverse-proxy headers (added by a proxy in front of Secbox, not by the client).
// A text body goes in single quotes; a binary one through base64 -d. A body cut when it was stored is flagged.
import { asText, decodeBase64 } from "../../components/body-view";
import { isProxyHeader, type TrackedRecord } from "./responders-api";

const SKIP = new Set(["host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"]);

/** A single-quoted shell word: every `'` becomes `'\''`. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function curlCommand(record: Pick<TrackedRecord, "method" | "path" | "rawQuery" | "headers" | "body" | "bodySize">, base: string): string {
  const url = base + record.path + (record.rawQuery ? `?${record.rawQuery}` : "");
  const bytes = decodeBase64(record.body);
  const text = bytes.length ? asText(bytes) : "";
  const parts: string[] = [];
  if (record.method === "HEAD") parts.push("--head");
  else if (record.method !== "GET" || bytes.length > 0) parts.push(`-X ${record.method}`);
  parts.push(shellQuote(url));
  for (const [name, value] of record.headers) {
    const n = (name ?? "").toLowerCase();
    if (SKIP.has(n) || isProxyHeader(n)) continue;
    parts.push(`-H ${shellQuote(`${name}: ${value ?? ""}`)}`);
  }
  let prefix = "";
  if (bytes.length > 0) {
    if (text !== null) parts.push(`--data-binary ${shellQuote(text)}`);
    else {
      prefix = `printf %s ${shellQuote(record.body!)} | base64 -d | `;
      parts.push("--data-binary @-");
    }
  }
  const note = Number(record.bodySize) > bytes.length ? `# The stored body is the first ${bytes.length} of ${Number(record.bodySize)} bytes.\n` : "";
  return `${note}${prefix}curl ${parts.join(" \\\n  ")}`;
}
