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
//
// The engine's parts: this file (the slots, one run's phases and result), run-types.ts (the public types of a run and
// of the engine, a leaf every part imports), session.ts (the browser and the prepared contexts), run-state.ts (a
// run's state, phase clock and failure messages), navigation.ts (the context's listeners and policy, loading the
// page, its waits, blocked requests), resources.ts (the script and stylesheet inventory), extraction.ts (the
// extracted value, screenshots); browser.ts, proxy.ts and extractor.ts as before.
import { Slots } from "../../../platform/jobs/queue";
import { OutboundError } from "../../../platform/net/errors";
import type { BrowserHandle } from "./browser";
import { extract, screenshot } from "./extraction";
import { ExtractError } from "./extractor";
import { blockedList, configure, navigate } from "./navigation";
import {
  MSG_BROWSER_GONE,
  MSG_ENGINE_CLOSED,
  MSG_PAGE_CLOSED,
  MSG_PAGE_CRASHED,
  PhaseClock,
  RunAborted,
  RunState,
  timeoutMessage,
} from "./run-state";
import type { ChromiumEngineOptions, ChromiumEngineStats, PageLog, PageRunRequest, PageRunResult, PageScreenshot } from "./run-types";
import { BrowserSessions } from "./session";

export { MAX_BLOCKED } from "./navigation";
export { cutUtf8, MSG_BROWSER_GONE, MSG_ENGINE_CLOSED, MSG_PAGE_CLOSED, MSG_PAGE_CRASHED, MSG_SELECTOR, timeoutMessage } from "./run-state";

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
  private readonly sessions: BrowserSessions;
  private totalRuns = 0;
  private activeRuns = 0;

  constructor(private readonly opts: ChromiumEngineOptions) {
    this.slots = new Slots(Math.max(1, Math.floor(opts.maxConcurrency)));
    this.sessions = new BrowserSessions(opts, () => this.slots.waiting);
  }

  stats(): ChromiumEngineStats {
    const cur = this.sessions.current && !this.sessions.current.dead ? this.sessions.current : null;
    const mem = cur ? cur.memory() : null;
    const s: ChromiumEngineStats = {
      launches: this.sessions.launches,
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
    return this.sessions.contextCount();
  }

  /** Closes every browser; runs in flight fail, later runs are refused. */
  close(): Promise<void> {
    return this.sessions.close();
  }

  async run(req: PageRunRequest): Promise<PageRunResult> {
    if (this.sessions.closed) return browserFailure(MSG_ENGINE_CLOSED);
    // Slots shared fairly between users (queue.ts): one user's queued runs leave a slot for another user's run.
    const release = await this.slots.acquire(req.owner);
    this.activeRuns++;
    this.totalRuns++;
    let done: Promise<void> = Promise.resolve();
    try {
      if (this.sessions.closed) return browserFailure(MSG_ENGINE_CLOSED);
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
        this.sessions.browser().catch((err: Error) => {
          throw new Error(err.message === MSG_ENGINE_CLOSED ? err.message : `Failed to start Chromium: ${(err.message.split("\n")[0] ?? "").trim()}`);
        }),
      );
      st.check();
      handle = h;
      h.runs++;
      h.active++;
      unsubscribeDeath = h.onDeath(() => st.abort(MSG_BROWSER_GONE));
      const taking = this.sessions.take(h);
      // Whenever it arrives, the context belongs to this run: teardown (or this callback, if the run already
      // ended) closes it.
      void taking.then(
        (p) => {
          st.prep = p;
          if (st.finished) void this.sessions.dispose(p);
        },
        () => {},
      );
      st.prep = await st.step(taking);
      st.check();
      // Start preparing the next run's context now (the renderer start overlaps with this run's page load),
      // unless runs are queued: those need contexts anyway and a spare would only compete for the CPU.
      if (this.slots.waiting === 0) this.sessions.refill();
      this.sessions.claim(st.prep.ctx);
      await st.step(configure(req, st, this.opts));
      clock.end("success");

      // navigate
      clock.begin("navigate");
      await st.step(navigate(req, st));
      clock.end("success");

      // extract
      clock.begin("extract");
      value = await st.step(extract(req, st));
      clock.end("success");
      if (req.debug) await screenshot(st, "final", 5000);
    } catch (err) {
      error = this.failureMessage(err, st);
      clock.end("failure", error);
      // A timed-out page is often still alive (a hanging request): its picture helps; a crashed one has none.
      const crashed = st.abortMessage === MSG_BROWSER_GONE || st.abortMessage === MSG_PAGE_CRASHED || !!st.prep?.h.dead;
      if (req.debug && st.prep && !crashed) await screenshot(st, "error", st.abortMessage === null ? 2000 : 1000);
    }
    clearTimeout(timer);
    st.finished = true;
    unsubscribeDeath?.();

    const result: PageRunResult = {
      ok: error === undefined,
      phases: clock.finish(),
      logs: st.logs,
      blocked: blockedList(st),
      elapsedMs: Math.round(performance.now() - started),
    };
    if (error !== undefined) result.error = error;
    else result.value = value;
    if (req.debug) result.screenshots = st.screenshots;

    const h = handle;
    const done = (async () => {
      if (st.prep) await this.sessions.dispose(st.prep);
      if (h) this.sessions.afterRun(h);
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
