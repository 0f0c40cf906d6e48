// The `remote` content variant (supplement §13.3): GET a URL through the one outbound client (§1.1 guard,
// 10 s, up to 10 redirects when asked, response heads up to 64 KiB: large sites send policies of 20 KB and more in a
// header, above the client's default 16 KiB; beyond 64 KiB "header too large") and read the policy from the enforcing header, the report-only header
// or the <meta http-equiv="Content-Security-Policy"> tag. A header source never reads the body (the client
// returns at the response head); the meta source reads the first 2 MiB of decoded HTML and drops the rest, so
// neither the page size nor a slow or endless body matters, and a decompression bomb stops at 2 MiB. The HTML
// is tokenized with htmlparser2 (attribute entities decoded, comments, scripts and other raw text handled as a
// browser would), never with regexes.
//
// A response may deliver several policies: repeated header lines, comma-separated policies in one line (as large
// sites send them), several meta tags. Browsers enforce all of them; the import takes the first, in delivery order,
// and says how many there were (§13.3).
import { Parser } from "htmlparser2";
import { invalid, type ApiError } from "../../platform/core/errors";
import { guardUrl, MAX_HEADER_BYTES, OutboundError, outboundFetch, type OutboundResponse } from "../../platform/net/client";
import { splitPolicies } from "./import";
import { REMOTE_MAX_REDIRECTS, REMOTE_SOURCES, REMOTE_TIMEOUT_MS } from "./shared-rules";

export type RemoteSource = (typeof REMOTE_SOURCES)[number];

export interface RemoteSpec {
  url: string;
  source: RemoteSource;
  followRedirects: boolean;
}

/** A response head (its CSP header lines included) of at most 64 KiB; larger → 400 UPSTREAM_FAILED "… header too large". */
export const REMOTE_MAX_HEADER_BYTES = MAX_HEADER_BYTES;
/** The meta tag is looked for in this much of the (decoded) HTML (§13.3); the rest is never read. */
export const META_SCAN_BYTES = 2 * 1024 * 1024;

const upstreamFailed = (message: string): ApiError => invalid(message, "UPSTREAM_FAILED");

/** Validates `{url, source, followRedirects}` (body 400s: INVALID_INPUT, or TARGET_NOT_ALLOWED for a literal refused target). */
export function validateRemote(raw: unknown, field: string, allowPrivate: boolean): RemoteSpec {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid(`${field}: must be an object {url, source, followRedirects}`);
  const { url, source, followRedirects } = raw as Record<string, unknown>;
  if (typeof url !== "string" || url.trim() === "") throw invalid(`${field}.url: must be a non-empty string`);
  if (typeof source !== "string" || !(REMOTE_SOURCES as readonly string[]).includes(source))
    throw invalid(`${field}.source: must be one of ${REMOTE_SOURCES.join(", ")}`);
  if (followRedirects !== undefined && followRedirects !== null && typeof followRedirects !== "boolean")
    throw invalid(`${field}.followRedirects: must be a boolean`);
  try {
    guardUrl(url.trim(), allowPrivate);
  } catch (err) {
    throw mapOutbound(err, `${field}.url`);
  }
  return { url: url.trim(), source: source as RemoteSource, followRedirects: followRedirects ?? true };
}

function mapOutbound(err: unknown, field: string): ApiError {
  if (err instanceof OutboundError) {
    if (err.code === "INVALID_URL") return invalid(`${field}: ${err.message}`);
    if (err.code === "TARGET_NOT_ALLOWED") return invalid(`${field}: ${err.message}`, "TARGET_NOT_ALLOWED");
    return upstreamFailed(`${field}: ${err.message}`);
  }
  return upstreamFailed(`${field}: upstream request failed`);
}

/** All policies a header list delivers, in order: one per header line, several per line when comma-joined. */
export function policiesFromHeaders(headers: [string, string][], name: string): string[] {
  return headers.filter(([n]) => n.toLowerCase() === name).flatMap(([, v]) => splitPolicies(v));
}

/** Elements whose text does not start the body, and inside which a <meta> is not applied. */
const RAW_TEXT = new Set(["title", "style", "script", "noscript", "template", "textarea", "xmp", "iframe", "noembed", "noframes"]);
/** Elements the HTML "in head" insertion mode keeps in the head; any other start tag opens the body. */
const HEAD_ELEMENTS = new Set(["html", "head", "meta", "link", "title", "style", "script", "base", "noscript", "template", "basefont", "bgsound"]);

/**
 * Policies of `<meta http-equiv="Content-Security-Policy" content="…">` tags, in document order. As in
 * browsers (HTML "Content security policy state"), only tags in the head count: not inside the body, a
 * <template> or a <noscript>. The http-equiv match is ASCII case-insensitive; entities in `content` are decoded.
 */
export function policiesFromHtml(html: string): string[] {
  const out: string[] = [];
  let inBody = false;
  let rawDepth = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (inBody) return;
        if (rawDepth > 0) {
          if (RAW_TEXT.has(name)) rawDepth++;
          return;
        }
        if (!HEAD_ELEMENTS.has(name)) {
          inBody = true;
          return;
        }
        if (name === "meta") {
          const equiv = (attribs["http-equiv"] ?? "").trim().toLowerCase();
          const content = attribs.content;
          // Browsers parse a meta policy like a header value: commas separate policies there too.
          if (equiv === "content-security-policy" && content !== undefined) out.push(...splitPolicies(content));
        }
        if (RAW_TEXT.has(name)) rawDepth++;
      },
      onclosetag(name) {
        if (inBody) return;
        if (RAW_TEXT.has(name) && rawDepth > 0) rawDepth--;
      },
      ontext(text) {
        if (!inBody && rawDepth === 0 && text.trim() !== "") inBody = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return out;
}

type Charset = ConstructorParameters<typeof TextDecoder>[0];

function charsetOf(headers: [string, string][]): Charset {
  const ct = headers.find(([n]) => n === "content-type")?.[1] ?? "";
  const m = /charset\s*=\s*"?([^";\s]+)/i.exec(ct);
  const label = (m?.[1]?.toLowerCase() ?? "utf-8") as Charset;
  try {
    new TextDecoder(label);
    return label;
  } catch {
    return "utf-8";
  }
}

/** Every policy the response delivers through `source`, in delivery order (browsers enforce all of them). */
export function extractPolicies(res: Pick<OutboundResponse, "headers" | "body">, source: RemoteSource): string[] {
  if (source === "enforcingHeader") return policiesFromHeaders(res.headers, "content-security-policy");
  if (source === "reportOnlyHeader") return policiesFromHeaders(res.headers, "content-security-policy-report-only");
  const head = res.body.subarray(0, META_SCAN_BYTES);
  return policiesFromHtml(new TextDecoder(charsetOf(res.headers), { fatal: false }).decode(head));
}

const SOURCE_LABEL: Record<RemoteSource, string> = {
  enforcingHeader: "Content-Security-Policy header",
  reportOnlyHeader: "Content-Security-Policy-Report-Only header",
  meta: '<meta http-equiv="Content-Security-Policy"> tag',
};

/** How a source delivers several policies, for the import's warning. */
export const SEVERAL_LABEL: Record<RemoteSource, string> = {
  enforcingHeader: "Content-Security-Policy header lines and comma-separated policies",
  reportOnlyHeader: "Content-Security-Policy-Report-Only header lines and comma-separated policies",
  meta: '<meta http-equiv="Content-Security-Policy"> tags and comma-separated policies',
};

/** Fetches the page and returns the policies it delivers (at least one); every failure is a 400 (§13.3). */
export async function fetchRemotePolicies(spec: RemoteSpec, field: string, allowPrivate: boolean): Promise<string[]> {
  let res: OutboundResponse;
  try {
    res = await outboundFetch({
      url: spec.url,
      method: "GET",
      headers: { accept: spec.source === "meta" ? "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" : "*/*" },
      timeoutMs: REMOTE_TIMEOUT_MS,
      // Header sources: no body at all. meta: its first 2 MiB; a longer body is cut, not an error.
      maxBodyBytes: spec.source === "meta" ? META_SCAN_BYTES : 0,
      overflow: "truncate",
      maxHeaderBytes: REMOTE_MAX_HEADER_BYTES,
      allowPrivate,
      maxRedirects: spec.followRedirects ? REMOTE_MAX_REDIRECTS : 0,
    });
  } catch (err) {
    throw mapOutbound(err, `${field}.url`);
  }
  if (res.status >= 400) throw upstreamFailed(`${field}.url: upstream answered HTTP ${res.status}`);
  const policies = extractPolicies(res, spec.source);
  if (policies.length === 0) throw upstreamFailed(`${field}.url: no ${SOURCE_LABEL[spec.source]} found in the response (HTTP ${res.status})`);
  return policies;
}
