// The browser session of the page-tracker engine (see engine.ts): one Chromium, started lazily, replaced when it
// crashes or disconnects, retired after `maxRunsPerBrowser` runs or when its process tree's memory passes
// `maxBrowserMemoryBytes` (a retiring browser finishes its runs, then closes); and the incognito contexts runs use,
// prepared ahead (`spareContexts`: context + blank page + CDP session behind a deny-all proxy session) so a run does
// not wait for a renderer to start. Each context serves exactly one run and is closed after it (killing the browser
// if closing hangs).
// Owns: the browsers, the spare contexts, the contexts not yet given to a run. Must never: give one context to two
// runs, keep a context after its run, or leave a browser's processes or directories behind (cleanup on death).
import type { BrowserContext } from "puppeteer-core";
import { BrowserHandle } from "./browser";
import type { ChromiumEngineOptions, Prepared } from "./run-types";
import { openProxySession } from "./proxy";
import { MSG_ENGINE_CLOSED } from "./run-state";

const CONTEXT_CLOSE_TIMEOUT = 5000;
const RSS_CHECK_EVERY = 10;

export class BrowserSessions {
  /** The browser new runs go to (null: none yet, or it died or retires). */
  current: BrowserHandle | null = null;
  private launching: Promise<BrowserHandle> | null = null;
  private readonly all = new Set<BrowserHandle>();
  closed = false;
  launches = 0;
  private readonly maxRuns: number;
  private readonly maxRss: number;
  private readonly spareTarget: number;
  /** Prepared contexts waiting for a run (each settles to null when its preparation failed). */
  private spares: { h: BrowserHandle; p: Promise<Prepared | null> }[] = [];
  /** Contexts that exist but belong to no run yet (excluded from contextCount). */
  private readonly idleContexts = new Set<BrowserContext>();
  /** Cleanups of browsers that died (awaited by close()). */
  private readonly cleanups = new Set<Promise<void>>();

  /** `queued`: runs waiting for a slot (spares are not prepared while runs wait: they need contexts anyway). */
  constructor(
    private readonly opts: ChromiumEngineOptions,
    private readonly queued: () => number,
  ) {
    this.maxRuns = opts.maxRunsPerBrowser ?? 500;
    this.maxRss = opts.maxBrowserMemoryBytes ?? 1024 * 1024 * 1024;
    this.spareTarget = Math.max(0, Math.floor(opts.spareContexts ?? 1));
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

  /** `ctx` belongs to a run now (it counts in contextCount). */
  claim(ctx: BrowserContext): void {
    this.idleContexts.delete(ctx);
  }

  // ---- browser lifecycle -----------------------------------------------------------------------------------

  async browser(): Promise<BrowserHandle> {
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
  afterRun(h: BrowserHandle): void {
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
    if (this.queued() === 0) this.refill();
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
  async take(h: BrowserHandle): Promise<Prepared> {
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
  refill(): void {
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
  dispose(p: Prepared): Promise<void> {
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
}
