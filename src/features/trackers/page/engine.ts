// Page-tracker engine (supplement §16.2, §17.5): renders a page in the shared Chromium and extracts a value.
//
// - One browser, started lazily, replaced when it crashes/disconnects, after `maxRunsPerBrowser` runs or when its
//   process tree's memory passes `maxBrowserMemoryBytes` (a retiring browser finishes its runs, then closes).
// - Every run: a fresh incognito BrowserContext (no cookie/storage/cache bleed) whose proxy is its own loopback
//   proxy session carrying that run's private-target policy (§1.1); viewport 1280×800; user agent, extra headers
//   and (optionally) ignored TLS errors applied to the run's page only. Contexts are prepared ahead (`spareContexts`,
//   blank page, deny-all proxy until the run configures it) so a run does not wait for a renderer to start; each
//   context serves exactly one run.
// - At most `maxConcurrency` runs at once (FIFO queue; queue wait does not count against the run's deadline).
// - A hard deadline per run (`timeoutMs`): when it passes the run fails and its context is closed (if closing
//   hangs, the whole browser is killed). The context and proxy session are closed after every run; the result is
//   returned first, the slot is released once the context is gone.
// - The extractor runs inside the page in an isolated world (extractor.ts), never in this process.
import { createHash } from "node:crypto";
import type { BrowserContext, CDPSession, HTTPResponse, Page } from "puppeteer-core";
import type { Logger } from "../../../platform/log";
import { Slots } from "../../../platform/jobs/queue";
import { OutboundError } from "../../../platform/net/errors";
import { parseOutboundUrl, type Resolver } from "../../../platform/net/guard";
import { BrowserHandle } from "./browser";
import { ExtractError, runExtractor, validSelector } from "./extractor";
import { cutCopy, hostKey, MAX_EVENT_URL_CHARS, MAX_EVENTS, openProxySession, urlHostKey, type ProxySession } from "./proxy";

export interface PageRunRequest {
  url: string;
  extractor?: string | null;
  waitFor?: { selector?: string; delayMs?: number };
  userAgent?: string;
  headers?: Record<string, string>;
  acceptInvalidCertificates?: boolean;
  resources?: boolean;
  secrets: Record<string, string>;
  /** The newest revision's `data` (§17.1); omitted from `context` when undefined. */
  previousContent?: unknown;
  /** Hard deadline of the whole run in ms (config.timeout). Starts when the run gets a slot. */
  timeoutMs: number;
  /** Private targets allowed for this run (§1.1). */
  allowPrivate: boolean;
  /** Collect screenshots (navigated, final/error) for `_debug`. Console logs are always collected. */
  debug?: boolean;
  /** Whose run it is (a user id): the Chromium slots' fair share between users (platform/jobs/queue.ts Slots). */
  owner?: string;
}

export type PagePhaseName = "browser" | "navigate" | "extract";

export interface PagePhase {
  phase: PagePhaseName;
  durationMs: number;
  status: "success" | "failure" | "skipped";
  error?: string;
}

export interface PageLog {
  level: "log" | "info" | "warn" | "error" | "debug";
  message: string;
}

export interface PageScreenshot {
  label: "navigated" | "final" | "error";
  mimeType: "image/png";
  /** base64 PNG of the viewport. */
  data: string;
}

export interface PageResource {
  url: string;
  type: "script" | "stylesheet";
  size: number;
  sha256: string;
}

export interface PageRunResult {
  ok: boolean;
  /** Stored bytes (§16.2/§17.1): UTF-8 of a string result, else JSON text; the `{content, resources}` JSON with resources. */
  value?: Uint8Array;
  error?: string;
  /** Always the three phases, in order; `skipped` after a failure. */
  phases: PagePhase[];
  /** Page console output, uncaught page errors and blocked/failed requests (warn); ≤ 200 entries of ≤ 2 KiB. */
  logs: PageLog[];
  /** URLs (or host:port for refused tunnels) the proxy refused under the private-target rule; at most
   * MAX_BLOCKED entries, URLs cut to 2 KiB. */
  blocked: string[];
  /** Only with `debug`: ≤ 5 MiB in total. */
  screenshots?: PageScreenshot[];
  /** Wall time of the run once it had a slot (the `_debug` `elapsedMs`). */
  elapsedMs: number;
}

export interface ChromiumEngineOptions {
  executable: string;
  maxConcurrency: number;
  log: Logger;
  /** Replace the browser after this many runs (bounds slow leaks). Default 500. */
  maxRunsPerBrowser?: number;
  /** Contexts kept ready (context + page + CDP session, no network) so a run skips the renderer start. Default 1. */
  spareContexts?: number;
  /** Replace the browser when its process tree's memory (PSS where readable, else RssAnon) exceeds this. Default 1 GiB. */
  maxBrowserMemoryBytes?: number;
  /** Launch timeout. Default 30 s. */
  launchTimeoutMs?: number;
  /** Test/ops hooks of the private-target guard (see platform/net/guard.ts resolveAllowed). */
  resolver?: Resolver;
  refuseAddress?: (ip: string) => boolean;
  extraArgs?: string[];
  /** `[chromium] user` (see browser.ts): the user Chromium runs as when Secbox runs as root. */
  user?: string;
}

export interface ChromiumEngineStats {
  browserPid?: number;
  launches: number;
  runs: number;
  active: number;
  queued: number;
  /** Sum of VmRSS of the current browser's process tree in bytes (null when none runs or /proc is missing);
   * overcounts pages shared between Chromium's processes. */
  browserRss: number | null;
  /** Sum of RssAnon of the same tree: the processes' own heap memory (the leak indicator). */
  browserAnon: number | null;
  /** Sum of PSS of the same tree (shared pages split), null where smaps is unreadable. */
  browserPss: number | null;
  browserProcesses: number;
}

const MAX_LOGS = 200;
/**
 * Per-run bound of what is kept about refused requests and failed requests (a page can fire them in a loop, with
 * URLs of up to 64 KiB): at most MAX_BLOCKED refused URLs / tunnels and MAX_FAILED_URLS failed request URLs, each
 * cut to MAX_EVENT_URL_CHARS (2 KiB); the rest is only counted. (Logs have their own bound: MAX_LOGS entries of
 * MAX_LOG_BYTES; the proxy session bounds its own records, see proxy.ts.)
 */
export const MAX_BLOCKED = MAX_EVENTS;
const MAX_FAILED_URLS = 1000;
const MAX_LOG_BYTES = 2048;
const MAX_SCREENSHOT_BYTES = 5 * 1024 * 1024;
const CONTEXT_CLOSE_TIMEOUT = 5000;
const RSS_CHECK_EVERY = 10;

export const MSG_BROWSER_GONE = "Browser crashed or disconnected";
export const MSG_PAGE_CRASHED = "Page crashed";
export const MSG_PAGE_CLOSED = "Page was closed during the run";
export const MSG_SELECTOR = "Selector not found";
export const MSG_ENGINE_CLOSED = "Page engine is shut down";
export const timeoutMessage = (ms: number) => `Run timed out after ${ms} ms`;

class RunAborted extends Error {}

/** An incognito context with its page, CDP session and (not yet configured, deny-all) proxy session. */
interface Prepared {
  h: BrowserHandle;
  proxy: ProxySession;
  ctx: BrowserContext;
  page: Page;
  cdp: CDPSession;
  disposed?: Promise<void>;
}

/** Cuts a string to at most `max` UTF-8 bytes on a character boundary. */
export function cutUtf8(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  const bytes = new TextEncoder().encode(s);
  if (bytes.length <= max) return s;
  let end = max;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** Per-run mutable state shared by the run's work and its deadline. */
class RunState {
  finished = false;
  abortMessage: string | null = null;
  /** The run's context (set as soon as it exists, so teardown always finds it). */
  prep?: Prepared;
  resources?: { pending: Promise<void>[]; items: Map<string, PageResource> };
  readonly logs: PageLog[] = [];
  /** Refused plain HTTP URLs and refused tunnels (host:port), MAX_BLOCKED in all; `blockedDropped` counts the rest. */
  readonly blockedUrls = new Set<string>();
  readonly blockedTunnels = new Set<string>();
  blockedDropped = 0;
  readonly failedUrls: string[] = [];
  readonly screenshots: PageScreenshot[] = [];
  screenshotBytes = 0;
  private abortFn: ((msg: string) => void) | null = null;
  readonly aborted: Promise<never>;

  constructor(readonly deadline: number) {
    this.aborted = new Promise<never>((_, reject) => {
      this.abortFn = (msg) => reject(new RunAborted(msg));
    });
    this.aborted.catch(() => {});
  }

  abort(message: string): void {
    if (this.abortMessage !== null) return;
    this.abortMessage = message;
    this.abortFn?.(message);
  }

  /** Throws once the run was aborted (deadline, crash) so late steps of the work never start. */
  check(): void {
    if (this.abortMessage !== null || this.finished) throw new RunAborted(this.abortMessage ?? "finished");
  }

  remaining(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  log(level: PageLog["level"], message: string): void {
    if (this.logs.length >= MAX_LOGS) return;
    this.logs.push({ level, message: cutUtf8(message, MAX_LOG_BYTES) });
  }

  /** Races a step against the abort signal. */
  step<T>(p: Promise<T>): Promise<T> {
    p.catch(() => {});
    return Promise.race([p, this.aborted]);
  }
}

class PhaseClock {
  readonly phases: PagePhase[] = [];
  private current: { phase: PagePhaseName; start: number } | null = null;

  begin(phase: PagePhaseName): void {
    this.current = { phase, start: performance.now() };
  }
  end(status: "success" | "failure", error?: string): void {
    if (!this.current) return;
    const p: PagePhase = { phase: this.current.phase, durationMs: Math.round(performance.now() - this.current.start), status };
    if (error !== undefined) p.error = error;
    this.phases.push(p);
    this.current = null;
  }
  get running(): PagePhaseName | null {
    return this.current?.phase ?? null;
  }
  /** All three phases in order; missing ones skipped. */
  finish(): PagePhase[] {
    const order: PagePhaseName[] = ["browser", "navigate", "extract"];
    return order.map((name) => this.phases.find((p) => p.phase === name) ?? { phase: name, durationMs: 0, status: "skipped" as const });
  }
}

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

/** A run that failed before reaching a page (no Chromium, engine closed, refused): browser failed, rest skipped. */
export function browserFailure(error: string): PageRunResult {
  return {
    ok: false,
    error,
    phases: [
      { phase: "browser", durationMs: 0, status: "failure", error },
      { phase: "navigate", durationMs: 0, status: "skipped" },
      { phase: "extract", durationMs: 0, status: "skipped" },
    ],
    logs: [],
    blocked: [],
    elapsedMs: 0,
  };
}

export class ChromiumEngine {
  private readonly slots: Slots;
  private current: BrowserHandle | null = null;
  private launching: Promise<BrowserHandle> | null = null;
  private readonly all = new Set<BrowserHandle>();
  private closed = false;
  private launches = 0;
  private totalRuns = 0;
  private activeRuns = 0;
  private readonly maxRuns: number;
  private readonly maxRss: number;
  private readonly spareTarget: number;
  /** Prepared contexts waiting for a run (each settles to null when its preparation failed). */
  private spares: { h: BrowserHandle; p: Promise<Prepared | null> }[] = [];
  /** Contexts that exist but belong to no run yet (excluded from contextCount). */
  private readonly idleContexts = new Set<BrowserContext>();
  /** Cleanups of browsers that died (awaited by close()). */
  private readonly cleanups = new Set<Promise<void>>();

  constructor(private readonly opts: ChromiumEngineOptions) {
    this.slots = new Slots(Math.max(1, Math.floor(opts.maxConcurrency)));
    this.maxRuns = opts.maxRunsPerBrowser ?? 500;
    this.maxRss = opts.maxBrowserMemoryBytes ?? 1024 * 1024 * 1024;
    this.spareTarget = Math.max(0, Math.floor(opts.spareContexts ?? 1));
  }

  stats(): ChromiumEngineStats {
    const cur = this.current && !this.current.dead ? this.current : null;
    const mem = cur ? cur.memory() : null;
    const s: ChromiumEngineStats = {
      launches: this.launches,
      runs: this.totalRuns,
      active: this.activeRuns,
      queued: this.slots.waiting,
      browserRss: mem?.rss ?? null,
      browserAnon: mem?.anon ?? null,
      browserPss: mem?.pss ?? null,
      browserProcesses: mem?.processes ?? 0,
    };
    if (cur?.pid !== undefined) s.browserPid = cur.pid;
    return s;
  }

  /** Incognito contexts held by runs right now, in every live browser (0 when idle; spares not counted). */
  contextCount(): number {
    let n = 0;
    for (const h of this.all) {
      if (h.dead) continue;
      const def = h.browser.defaultBrowserContext();
      n += h.browser.browserContexts().filter((c) => c !== def && !this.idleContexts.has(c)).length;
    }
    return n;
  }

  /** Closes every browser; runs in flight fail, later runs are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.launching;
    this.launching = null;
    if (pending) await pending.then((h) => this.all.add(h)).catch(() => {});
    this.current = null;
    const spares = this.spares;
    this.spares = [];
    await Promise.all(spares.map((s) => s.p.then((p) => (p ? this.dispose(p) : undefined))));
    await Promise.all([...this.all].map((h) => h.close()));
    this.all.clear();
    await Promise.all([...this.cleanups]);
  }

  async run(req: PageRunRequest): Promise<PageRunResult> {
    if (this.closed) return browserFailure(MSG_ENGINE_CLOSED);
    // Slots shared fairly between users (queue.ts): one user's queued runs leave a slot for another user's run.
    const release = await this.slots.acquire(req.owner);
    this.activeRuns++;
    this.totalRuns++;
    let done: Promise<void> = Promise.resolve();
    try {
      if (this.closed) return browserFailure(MSG_ENGINE_CLOSED);
      const out = await this.runInSlot(req);
      done = out.done;
      return out.result;
    } finally {
      // The slot is held until the run's context is closed (the result is returned before that).
      void done.finally(() => {
        this.activeRuns--;
        release();
      });
    }
  }


  // ---- browser lifecycle -----------------------------------------------------------------------------------

  private async browser(): Promise<BrowserHandle> {
    const cur = this.current;
    if (cur && !cur.dead && !cur.retiring) return cur;
    if (!this.launching) {
      this.launching = (async () => {
        const h = await BrowserHandle.launch({
          executable: this.opts.executable,
          log: this.opts.log,
          launchTimeoutMs: this.opts.launchTimeoutMs ?? 30_000,
          ...(this.opts.extraArgs ? { extraArgs: this.opts.extraArgs } : {}),
          ...(this.opts.user !== undefined ? { user: this.opts.user } : {}),
        });
        this.launches++;
        if (this.closed) {
          await h.close();
          throw new Error(MSG_ENGINE_CLOSED);
        }
        this.all.add(h);
        h.onDeath(() => {
          if (this.current === h) this.current = null;
          this.all.delete(h);
          this.dropSpares(h);
          this.cleanups.add(h.cleanup());
        });
        this.current = h;
        this.refill();
        return h;
      })().finally(() => {
        this.launching = null;
      });
    }
    return await this.launching;
  }

  /** After a run's teardown: retire the browser when it served enough runs or grew too big; refill spares. */
  private afterRun(h: BrowserHandle): void {
    h.active--;
    if (!h.retiring && !h.dead) {
      let reason: string | null = null;
      if (h.runs >= this.maxRuns) reason = "run count";
      else if (h.runs % RSS_CHECK_EVERY === 0) {
        const mem = h.memory();
        const size = mem ? (mem.pss ?? mem.anon) : null;
        if (size !== null && size > this.maxRss) reason = `memory ${Math.round(size / 1048576)} MiB`;
      }
      if (reason) {
        this.opts.log.info("chromium retired", { pid: h.pid, reason, runs: h.runs });
        this.retire(h);
      }
    }
    if ((h.retiring || this.closed) && h.active === 0) {
      this.all.delete(h);
      this.cleanups.add(h.close());
    }
    if (this.slots.waiting === 0) this.refill();
  }

  private retire(h: BrowserHandle): void {
    h.retiring = true;
    if (this.current === h) this.current = null;
    this.dropSpares(h);
  }

  // ---- prepared contexts -----------------------------------------------------------------------------------

  /** Incognito context + page + CDP session behind a fresh deny-all proxy session; nothing is loaded. */
  private async prepare(h: BrowserHandle): Promise<Prepared> {
    const proxy = await openProxySession();
    let ctx: BrowserContext | undefined;
    try {
      ctx = await h.browser.createBrowserContext({
        proxyServer: proxy.address,
        proxyBypassList: ["<-loopback>"],
        downloadBehavior: { policy: "deny" },
      });
      this.idleContexts.add(ctx);
      const page = await ctx.newPage();
      const cdp = await page.createCDPSession();
      await cdp.send("Runtime.enable");
      return { h, proxy, ctx, page, cdp };
    } catch (err) {
      if (ctx) {
        this.idleContexts.delete(ctx);
        await ctx.close().catch(() => {});
      }
      await proxy.close();
      throw err;
    }
  }

  /** A prepared context of `h` for a run: a spare when one is ready, else a fresh one. */
  private async take(h: BrowserHandle): Promise<Prepared> {
    const i = this.spares.findIndex((s) => s.h === h);
    if (i >= 0) {
      const [spare] = this.spares.splice(i, 1);
      const p = await (spare as { p: Promise<Prepared | null> }).p;
      if (p && !h.dead && !p.page.isClosed()) return p;
      if (p) void this.dispose(p);
    }
    return await this.prepare(h);
  }

  /** Keeps `spareContexts` contexts prepared on the current browser while it is healthy. */
  private refill(): void {
    const h = this.current;
    if (this.closed || !h || h.dead || h.retiring) return;
    while (this.spares.filter((s) => s.h === h).length < this.spareTarget) {
      const p = this.prepare(h).catch((err: Error) => {
        this.opts.log.debug("spare context failed", { error: err.message });
        return null;
      });
      this.spares.push({ h, p });
    }
  }

  private dropSpares(h: BrowserHandle): void {
    const mine = this.spares.filter((s) => s.h === h);
    this.spares = this.spares.filter((s) => s.h !== h);
    for (const s of mine) void s.p.then((p) => (p ? this.dispose(p) : undefined));
  }

  /** Closes a context (killing its browser when that hangs) and its proxy session. Idempotent. */
  private dispose(p: Prepared): Promise<void> {
    p.disposed ??= (async () => {
      this.idleContexts.delete(p.ctx);
      const h = p.h;
      if (!h.dead) {
        const closing = p.ctx.close().then(
          () => true,
          () => h.dead,
        );
        let timer: ReturnType<typeof setTimeout> | undefined;
        const ok = await Promise.race([closing, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), CONTEXT_CLOSE_TIMEOUT)))]);
        clearTimeout(timer);
        if (!ok && !h.dead) {
          this.opts.log.warn("chromium context did not close in time; killing the browser", { pid: h.pid });
          this.retire(h);
          h.kill();
        }
      }
      await p.proxy.close().catch(() => {});
    })();
    return p.disposed;
  }

  // ---- one run ---------------------------------------------------------------------------------------------

  private async runInSlot(req: PageRunRequest): Promise<{ result: PageRunResult; done: Promise<void> }> {
    const started = performance.now();
    const timeoutMs = Math.max(1, Math.floor(req.timeoutMs));
    const st = new RunState(Date.now() + timeoutMs);
    const clock = new PhaseClock();
    let handle: BrowserHandle | null = null;
    let unsubscribeDeath: (() => void) | null = null;
    const timer = setTimeout(() => st.abort(timeoutMessage(timeoutMs)), timeoutMs);

    let value: Uint8Array | undefined;
    let error: string | undefined;
    try {
      // browser
      clock.begin("browser");
      const h = await st.step(
        this.browser().catch((err: Error) => {
          throw new Error(err.message === MSG_ENGINE_CLOSED ? err.message : `Failed to start Chromium: ${(err.message.split("\n")[0] ?? "").trim()}`);
        }),
      );
      st.check();
      handle = h;
      h.runs++;
      h.active++;
      unsubscribeDeath = h.onDeath(() => st.abort(MSG_BROWSER_GONE));
      const taking = this.take(h);
      // Whenever it arrives, the context belongs to this run: teardown (or this callback, if the run already
      // ended) closes it.
      void taking.then(
        (p) => {
          st.prep = p;
          if (st.finished) void this.dispose(p);
        },
        () => {},
      );
      st.prep = await st.step(taking);
      st.check();
      // Start preparing the next run's context now (the renderer start overlaps with this run's page load),
      // unless runs are queued: those need contexts anyway and a spare would only compete for the CPU.
      if (this.slots.waiting === 0) this.refill();
      await st.step(this.configure(req, st));
      clock.end("success");

      // navigate
      clock.begin("navigate");
      await st.step(this.navigate(req, st));
      clock.end("success");

      // extract
      clock.begin("extract");
      value = await st.step(this.extract(req, st));
      clock.end("success");
      if (req.debug) await this.screenshot(st, "final", 5000);
    } catch (err) {
      error = this.failureMessage(err, st);
      clock.end("failure", error);
      // A timed-out page is often still alive (a hanging request): its picture helps; a crashed one has none.
      const crashed = st.abortMessage === MSG_BROWSER_GONE || st.abortMessage === MSG_PAGE_CRASHED || !!st.prep?.h.dead;
      if (req.debug && st.prep && !crashed) await this.screenshot(st, "error", st.abortMessage === null ? 2000 : 1000);
    }
    clearTimeout(timer);
    st.finished = true;
    unsubscribeDeath?.();

    const result: PageRunResult = {
      ok: error === undefined,
      phases: clock.finish(),
      logs: st.logs,
      blocked: this.blockedList(st),
      elapsedMs: Math.round(performance.now() - started),
    };
    if (error !== undefined) result.error = error;
    else result.value = value;
    if (req.debug) result.screenshots = st.screenshots;

    const h = handle;
    const done = (async () => {
      if (st.prep) await this.dispose(st.prep);
      if (h) this.afterRun(h);
    })().catch((err: Error) => this.opts.log.error("page run teardown failed", { error: err.message }));
    return { result, done };
  }

  private failureMessage(err: unknown, st: RunState): string {
    if (st.abortMessage !== null) return st.abortMessage;
    if (err instanceof ExtractError || err instanceof OutboundError) return err.message;
    if (err instanceof RunAborted) return err.message;
    const msg = err instanceof Error ? err.message : String(err);
    if (st.prep?.h.dead) return MSG_BROWSER_GONE;
    if (st.prep?.page.isClosed()) return MSG_PAGE_CLOSED;
    if (/Target closed|Session closed|Connection closed|Protocol error.*(closed|detached)/i.test(msg)) return MSG_PAGE_CLOSED;
    return msg;
  }

  /** Gives the run's prepared context its policy, listeners, user agent, headers and TLS setting. */
  private async configure(req: PageRunRequest, st: RunState): Promise<void> {
    const { proxy, page, cdp } = st.prep as Prepared;
    proxy.configure(
      {
        allowPrivate: req.allowPrivate,
        ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
        ...(this.opts.refuseAddress ? { refuseAddress: this.opts.refuseAddress } : {}),
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
    this.idleContexts.delete((st.prep as Prepared).ctx);
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

  private async navigate(req: PageRunRequest, st: RunState): Promise<void> {
    const { page, proxy } = st.prep as Prepared;
    parseOutboundUrl(req.url); // INVALID_URL → failure with its message
    let mainUrl = req.url;
    page.on("request", (r) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) mainUrl = r.url();
    });
    if (req.resources) {
      const job = { pending: [] as Promise<void>[], items: new Map<string, PageResource>() };
      st.resources = job;
      page.on("response", (resp: HTTPResponse) => {
        const type = resp.request().resourceType();
        if (type !== "script" && type !== "stylesheet") return;
        const url = resp.url();
        if (!/^https?:/i.test(url) || resp.status() < 200 || resp.status() > 299) return;
        const key = `${type} ${url}`;
        if (job.items.has(key) || job.pending.length > 500) return;
        job.pending.push(
          resp
            .buffer()
            .then((buf) => {
              if (job.items.has(key)) return;
              job.items.set(key, { url, type, size: buf.length, sha256: createHash("sha256").update(buf).digest("hex") });
            })
            .catch((err: Error) => st.log("warn", `Could not read ${type} ${url}: ${err.message}`)),
        );
      });
    }
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
    if (response && proxy.isOwnRefusal(response.headers())) throw new Error(await this.refusalText(response));
    if (req.debug) await this.screenshot(st, "navigated", 5000);
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

  private async extract(req: PageRunRequest, st: RunState): Promise<Uint8Array> {
    const context: { previousContent?: unknown; params: { secrets: Record<string, string> } } = { params: { secrets: req.secrets } };
    if (req.previousContent !== undefined) context.previousContent = req.previousContent;
    const job = st.resources;
    const out = await runExtractor((st.prep as Prepared).cdp, req.extractor, context);
    st.check();
    if (!req.resources) return out.bytes;
    if (job) await Promise.all(job.pending);
    const resources = [...(job?.items.values() ?? [])].sort((a, b) =>
      a.type !== b.type ? (a.type < b.type ? -1 : 1) : a.url < b.url ? -1 : a.url > b.url ? 1 : 0,
    );
    return new TextEncoder().encode(JSON.stringify({ content: out.json, resources }));
  }

  private async screenshot(st: RunState, label: PageScreenshot["label"], timeoutMs: number): Promise<void> {
    const page = st.prep?.page;
    if (!page || page.isClosed()) return;
    try {
      const shot = page.screenshot({ type: "png", encoding: "base64" }) as Promise<string>;
      shot.catch(() => {});
      const data = await Promise.race([shot, new Promise<null>((r) => setTimeout(() => r(null), Math.min(timeoutMs, st.remaining() + 1000)))]);
      if (typeof data !== "string") return;
      const size = Math.floor((data.length * 3) / 4);
      if (st.screenshotBytes + size > MAX_SCREENSHOT_BYTES) return;
      st.screenshotBytes += size;
      st.screenshots.push({ label, mimeType: "image/png", data });
    } catch {
      /* best effort */
    }
  }

  /** The message of a proxy refusal served as the main document (the proxy's own text, from its answer). */
  private async refusalText(response: HTTPResponse): Promise<string> {
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
  private blockedList(st: RunState): string[] {
    const out = new Set<string>(st.blockedUrls);
    for (const key of st.blockedTunnels) {
      const matches = st.failedUrls.filter((u) => urlHostKey(u) === key);
      if (matches.length === 0) out.add(key);
      for (const m of matches) out.add(m);
    }
    return [...out].slice(0, MAX_BLOCKED);
  }
}

/**
 * The page-tracker `_debug` trace (supplement §17.5) from a debug run: `result` (the value as `data` shows it,
 * through the core's §17.1 converter) or `error`, console logs, screenshots and the elapsed time.
 */
export function pageDebugTrace(
  r: PageRunResult,
  toData: (bytes: Uint8Array) => unknown,
): { result?: unknown; error?: string; logs: PageLog[]; screenshots: PageScreenshot[]; elapsedMs: number } {
  const head = r.ok && r.value ? { result: toData(r.value) } : { error: r.error ?? "Run failed" };
  return { ...head, logs: r.logs, screenshots: r.screenshots ?? [], elapsedMs: r.elapsedMs };
}
