// Navigation of a page run (see engine.ts): the run's prepared context gets its policy and listeners (the proxy
// session's private-target rule, console and uncaught errors captured, dialogs dismissed, refused and failed requests
// recorded), then the page loads its URL, its waits are honoured (a selector, a delay), and refusals by the proxy
// become the run's failure with the proxy's message.
// Owns: RunState.blockedUrls/.blockedTunnels/.blockedDropped/.failedUrls (bounded, see MAX_BLOCKED). Must never:
// let a page reach a private target the run does not allow (the proxy session decides; this only reports), block on
// a page's dialog, or keep more of a page's events than the bounds below.
import type { HTTPResponse } from "puppeteer-core";
import { parseOutboundUrl } from "../../../platform/net/guard";
import type { ChromiumEngineOptions, PageLog, PageRunRequest } from "./run-types";
import { screenshot } from "./extraction";
import { validSelector } from "./extractor";
import { cutCopy, hostKey, MAX_EVENT_URL_CHARS, MAX_EVENTS, urlHostKey } from "./proxy";
import { watchResources } from "./resources";
import { MSG_PAGE_CRASHED, MSG_SELECTOR, type RunState } from "./run-state";
import type { Prepared } from "./run-types";

/**
 * Per-run bound of what is kept about refused requests and failed requests (a page can fire them in a loop, with
 * URLs of up to 64 KiB): at most MAX_BLOCKED refused URLs / tunnels and MAX_FAILED_URLS failed request URLs, each
 * cut to MAX_EVENT_URL_CHARS (2 KiB); the rest is only counted. (Logs have their own bound: MAX_LOGS entries of
 * MAX_LOG_BYTES; the proxy session bounds its own records, see proxy.ts.)
 */
export const MAX_BLOCKED = MAX_EVENTS;
const MAX_FAILED_URLS = 1000;

const CONSOLE_LEVEL: Record<string, PageLog["level"]> = {
  log: "log",
  info: "info",
  warning: "warn",
  error: "error",
  debug: "debug",
  assert: "error",
  trace: "log",
  dir: "log",
  dirxml: "log",
  table: "log",
};

interface RemoteObjectLike {
  type?: string;
  subtype?: string;
  value?: unknown;
  unserializableValue?: string;
  description?: string;
  preview?: { properties?: { name: string; value?: string }[]; subtype?: string; overflow?: boolean };
}

function formatArg(a: RemoteObjectLike): string {
  if (a.type === "string") return String(a.value);
  if (a.unserializableValue !== undefined) return a.unserializableValue;
  if (a.type === "undefined") return "undefined";
  if (a.value !== undefined) return typeof a.value === "object" ? JSON.stringify(a.value) : String(a.value);
  if (a.preview?.properties && a.type === "object" && a.subtype !== "error") {
    const props = a.preview.properties.map((p) => (a.preview?.subtype === "array" ? `${p.value}` : `${p.name}: ${p.value}`));
    const body = props.join(", ") + (a.preview.overflow ? ", …" : "");
    return a.preview.subtype === "array" ? `[${body}]` : `{${body}}`;
  }
  return a.description ?? a.type ?? "";
}

/** Gives the run's prepared context its policy, listeners, user agent, headers and TLS setting. */
export async function configure(req: PageRunRequest, st: RunState, guard: Pick<ChromiumEngineOptions, "resolver" | "refuseAddress">): Promise<void> {
  const { proxy, page, cdp } = st.prep as Prepared;
  proxy.configure(
    {
      allowPrivate: req.allowPrivate,
      ...(guard.resolver ? { resolver: guard.resolver } : {}),
      ...(guard.refuseAddress ? { refuseAddress: guard.refuseAddress } : {}),
    },
    (e) => {
      const target = e.url ?? hostKey(e.host, e.port);
      if (e.kind !== "blocked") {
        st.log("warn", `Request to ${target} failed: ${e.message}`);
        return;
      }
      st.log("warn", `Blocked request to ${target}: ${e.message}`);
      const into = e.url !== undefined ? st.blockedUrls : st.blockedTunnels;
      if (into.has(target)) return;
      if (st.blockedUrls.size + st.blockedTunnels.size < MAX_BLOCKED) into.add(target);
      else st.blockedDropped++;
    },
  );
  page.on("error", () => st.abort(MSG_PAGE_CRASHED));
  // alert/confirm/prompt would block the page's scripts (and its load event) forever: dismiss them.
  page.on("dialog", (d) => {
    st.log("info", `Dialog (${d.type()}) dismissed: ${d.message()}`);
    void d.dismiss().catch(() => {});
  });
  page.on("requestfailed", (r) => {
    if (st.failedUrls.length < MAX_FAILED_URLS) st.failedUrls.push(cutCopy(r.url(), MAX_EVENT_URL_CHARS));
  });
  cdp.on("Runtime.consoleAPICalled", (e) => {
    const level = CONSOLE_LEVEL[e.type] ?? "log";
    st.log(level, e.args.map((a) => formatArg(a as RemoteObjectLike)).join(" "));
  });
  cdp.on("Runtime.exceptionThrown", (e) => {
    const d = e.exceptionDetails;
    const desc = d.exception?.description ?? d.text;
    st.log("error", `Uncaught ${desc.split(/\n\s+at /)[0] ?? desc}`);
  });
  if (req.acceptInvalidCertificates) await cdp.send("Security.setIgnoreCertificateErrors", { ignore: true });
  if (req.userAgent) await page.setUserAgent({ userAgent: req.userAgent });
  const headers = req.headers ?? {};
  if (Object.keys(headers).length > 0) {
    try {
      await page.setExtraHTTPHeaders(headers);
    } catch (err) {
      throw new Error(`Invalid header: ${(err as Error).message}`);
    }
  }
}

export async function navigate(req: PageRunRequest, st: RunState): Promise<void> {
  const { page, proxy } = st.prep as Prepared;
  parseOutboundUrl(req.url); // INVALID_URL → failure with its message
  let mainUrl = req.url;
  page.on("request", (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) mainUrl = r.url();
  });
  if (req.resources) watchResources(page, st);
  let response: HTTPResponse | null;
  try {
    response = await page.goto(req.url, { waitUntil: "load", timeout: 0 });
  } catch (err) {
    st.check();
    const refused = proxy.failureFor(mainUrl) ?? proxy.failureFor(req.url);
    if (refused) throw new Error(refused.message);
    const msg = (err as Error).message.replace(/ at https?:\/\/\S+$/, "");
    throw new Error(`Navigation failed: ${msg}`);
  }
  st.check();
  const refused = proxy.failureFor(response?.url() ?? mainUrl);
  if (refused) throw new Error(refused.message);
  // The proxy's own answer as the document, its event no longer in the session's lookup tables (a page that
  // flooded refused requests first): still a failure, with the proxy's message.
  if (response && proxy.isOwnRefusal(response.headers())) throw new Error(await refusalText(response));
  if (req.debug) await screenshot(st, "navigated", 5000);
  const status = response?.status() ?? 0;
  if (status >= 400) st.log("warn", `The page answered HTTP ${status}`);
  const selector = req.waitFor?.selector;
  if (selector) {
    if (!(await validSelector((st.prep as Prepared).cdp, selector))) throw new Error(`Invalid selector: ${selector}`);
    // Leave room for the extract phase: wait at most the remaining time minus a reserve.
    const budget = Math.max(0, st.remaining() - Math.min(2000, Math.floor(req.timeoutMs / 5)));
    try {
      await page.waitForSelector(selector, { timeout: Math.max(1, budget) });
    } catch (err) {
      st.check();
      const name = (err as Error).name;
      if (name === "TimeoutError") throw new Error(MSG_SELECTOR);
      throw err;
    }
  }
  const delay = req.waitFor?.delayMs ?? 0;
  if (delay > 0) await new Promise((r) => setTimeout(r, Math.min(delay, st.remaining())));
  st.check();
}

/** The message of a proxy refusal served as the main document (the proxy's own text, from its answer). */
async function refusalText(response: HTTPResponse): Promise<string> {
  const fallback = response.status() === 403 ? "URL not allowed (private address)" : "Failed to connect to upstream";
  try {
    const text = (await response.text()).trim();
    return text.length > 0 && text.length <= 500 ? text : fallback;
  } catch {
    return fallback;
  }
}

/**
 * Blocked targets as URLs (≤ MAX_BLOCKED): plain HTTP by URL, tunnels matched to the page's failed requests,
 * else host:port.
 */
export function blockedList(st: RunState): string[] {
  const out = new Set<string>(st.blockedUrls);
  for (const key of st.blockedTunnels) {
    const matches = st.failedUrls.filter((u) => urlHostKey(u) === key);
    if (matches.length === 0) out.add(key);
    for (const m of matches) out.add(m);
  }
  return [...out].slice(0, MAX_BLOCKED);
}
