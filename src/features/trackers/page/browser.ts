// The shared Chromium process of the page-tracker engine: launch flags for locked-down hosts (chromium-flags.ts), a fresh user data
// directory per browser (Chromium's TMPDIR inside it; removed when the browser is gone), a browser-wide deny-all proxy (traffic outside a run's own
// context, e.g. background requests, goes nowhere), crash detection, and the RSS of the whole process tree.
// Sandbox: Chromium refuses to start as root unless its sandbox is turned off (--no-sandbox), which would leave the
// hostile pages page trackers load without a renderer sandbox. So when Secbox runs as root, Chromium runs as
// `[chromium] user` (default "nobody"): started through `setpriv --reuid --regid --clear-groups` (util-linux; it
// execs Chromium in place, so the pid, the process group and the DevTools pipe on fds 3/4 stay puppeteer's), with
// its user data directory owned by that user and a minimal environment (nothing of Secbox's own environment, which
// may hold secrets, is readable through /proc/<pid>/environ by that user's processes). Chromium then keeps its
// sandbox (user and PID namespaces + seccomp-bpf for renderers; measured on this host's kernel). `user = ""` keeps
// the old behaviour (as root with --no-sandbox). Not root: Chromium runs as Secbox's user, sandboxed.
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve, sep } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import type { Logger } from "../../../platform/log";
import { disableFeaturesFlag, lockedDownFlags } from "./chromium-flags";
import { openProxySession, type ProxySession } from "./proxy";

/** Flags every browser gets (puppeteer-core adds its own automation defaults before these): the locked-down list
 *  of chromium-flags.ts (shared with the browser tests) and what only the engine needs. */
export function launchArgs(proxyAddress: string, asRoot: boolean): string[] {
  return [
    ...lockedDownFlags(asRoot),
    "--disable-notifications",
    // Every request goes to our loopback proxy; `<-loopback>` removes Chromium's implicit loopback bypass.
    `--proxy-server=${proxyAddress}`,
    "--proxy-bypass-list=<-loopback>",
    // No name resolution inside Chromium at all (the proxy resolves and checks): no DNS leak, no rebinding.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    // WebRTC may not send UDP around the proxy (ICE, STUN, connectivity checks to page-supplied candidates): only
    // proxied TCP (TURN over TCP through our proxy, which applies the run's policy). This Chromium honours
    // --webrtc-ip-handling-policy; --force-… is kept for builds that read that one.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    // No local-network permission prompts, no certificate-transparency list downloads.
    disableFeaturesFlag(["LocalNetworkAccessChecks", "CertificateTransparencyComponentUpdater"]),
  ];
}

/**
 * Memory of a process tree in bytes. `rss` = sum of VmRSS (pages shared between Chromium's processes — binary,
 * fonts, zygote copy-on-write — counted once per process, so it overstates); `anon` = sum of RssAnon (the
 * processes' own heap memory: what grows when something leaks); `pss` = sum of proportional set sizes, the
 * tree's real share, or null when a process's smaps cannot be read (non-dumpable sandboxed processes without
 * CAP_SYS_PTRACE).
 */
export interface TreeMemory {
  rss: number;
  anon: number;
  pss: number | null;
  processes: number;
}

/** Memory of `pid` and all its descendants, from /proc; null where /proc is unavailable or the process is gone. */
export function processTreeMemory(pid: number): TreeMemory | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const children = new Map<number, number[]>();
  for (const e of entries) {
    if (!/^[0-9]+$/.test(e)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, "latin1");
    } catch {
      continue;
    }
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses, so split after the last ')'.
    const tail = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(tail[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(e));
    children.set(ppid, list);
  }
  let rss = 0;
  let anon = 0;
  let pss: number | null = 0;
  let processes = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop() as number;
    try {
      const status = readFileSync(`/proc/${p}/status`, "latin1");
      const m = /VmRSS:\s+([0-9]+) kB/.exec(status);
      if (m) rss += Number(m[1]) * 1024;
      const a = /RssAnon:\s+([0-9]+) kB/.exec(status);
      if (a) anon += Number(a[1]) * 1024;
      processes++;
      if (pss !== null) {
        try {
          const rollup = readFileSync(`/proc/${p}/smaps_rollup`, "latin1");
          const q = /^Pss:\s+([0-9]+) kB/m.exec(rollup);
          pss = q ? pss + Number(q[1]) * 1024 : null;
        } catch {
          pss = null;
        }
      }
    } catch {
      /* exited meanwhile */
    }
    for (const c of children.get(p) ?? []) stack.push(c);
  }
  return processes > 0 ? { rss, anon, pss, processes } : null;
}

export interface BrowserHandleOptions {
  executable: string;
  log: Logger;
  launchTimeoutMs: number;
  extraArgs?: string[];
  /** `[chromium] user`: the user Chromium runs as when Secbox runs as root (name or numeric uid); "" or absent = as
   *  root, with --no-sandbox. Ignored when Secbox is not root. */
  user?: string;
}

/** A user Chromium is started as. */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
  setpriv: string;
}

const idOf = (flag: "-u" | "-g", user: string): number | null => {
  const out = Bun.spawnSync(["id", flag, "--", user], { stdout: "pipe", stderr: "ignore" });
  const text = out.stdout.toString().trim();
  return out.exitCode === 0 && /^[0-9]+$/.test(text) ? Number(text) : null;
};

/**
 * Who Chromium runs as: null = as this process (not root, or root with `user = ""`). Throws a message fit for a
 * run's error when the configured user or setpriv is missing (never silently falls back to an unsandboxed root).
 */
export function chromiumRunAs(user: string | undefined, isRoot = typeof process.getuid === "function" && process.getuid() === 0): RunAs | null {
  if (!isRoot || !user) return null;
  const uid = idOf("-u", user);
  const gid = idOf("-g", user);
  if (uid === null || gid === null)
    throw new Error(`Chromium cannot start: [chromium] user "${user}" does not exist on this host (create it, or set [chromium] user)`);
  if (uid === 0) return null; // root after all: as before
  const setpriv = Bun.which("setpriv");
  if (!setpriv) throw new Error(`Chromium cannot start as user "${user}": setpriv (util-linux) is not installed`);
  return { name: user, uid, gid, setpriv };
}

/** The environment Chromium gets: nothing of Secbox's own (it may hold SECBOX_* secrets), home and temp inside the
 *  user data directory. */
function chromiumEnv(userDataDir: string, tmp: string | null): Record<string, string> {
  const env: Record<string, string> = {
    HOME: userDataDir,
    XDG_CONFIG_HOME: join(userDataDir, ".config"),
    XDG_CACHE_HOME: join(userDataDir, ".cache"),
  };
  for (const k of ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "FONTCONFIG_PATH", "FONTCONFIG_FILE"]) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  if (tmp !== null) env.TMPDIR = tmp;
  return env;
}

/** One Chromium process. `dead` turns true when it disconnects (crash, kill, close). */
export class BrowserHandle {
  dead = false;
  retiring = false;
  /** Runs started on this browser / running now. */
  runs = 0;
  active = 0;
  readonly launchedAt = Date.now();
  private readonly deathListeners = new Set<() => void>();
  private closing: Promise<void> | null = null;
  /** Directory of Chromium's singleton socket when it is outside the user data directory (removed by cleanup). */
  private socketDir: string | null = null;

  private constructor(
    readonly browser: Browser,
    readonly pid: number | undefined,
    /** Holds the user data directory (`profile/`) and the owner file; removed when the browser is gone. */
    private readonly baseDir: string,
    private readonly denyProxy: ProxySession,
    private readonly log: Logger,
  ) {
    browser.on("disconnected", () => this.onDisconnected());
  }

  static async launch(opts: BrowserHandleOptions): Promise<BrowserHandle> {
    sweepStaleDirs(opts.log);
    // <tmp>/secbox-chromium-XXXXXX (ours, with the owner file) holds the profile, which Chromium's user may own.
    const baseDir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
    writeFileSync(join(baseDir, OWNER_FILE), String(process.pid));
    const userDataDir = join(baseDir, "profile");
    mkdirSync(userDataDir, { mode: 0o700 });
    // Chromium's temporary files and directories — among them the org.chromium.Chromium.XXXXXX directory of its
    // process-singleton socket, which it leaves behind — go inside the user data directory, removed with it.
    // (Unix socket paths are limited to 107 bytes: with a very long TMPDIR the system one is used instead and
    // the socket directory is removed by cleanup().)
    const chromiumTmp = join(userDataDir, "tmp");
    mkdirSync(chromiumTmp);
    const ownTmp = join(chromiumTmp, "org.chromium.Chromium.XXXXXX", "SingletonSocket").length < 100;
    let denyProxy: ProxySession;
    try {
      denyProxy = await openProxySession({ allowPrivate: false, denyAll: true });
    } catch (err) {
      rmSync(baseDir, { recursive: true, force: true });
      throw err;
    }
    const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
    let browser: Browser;
    let runAs: RunAs | null = null;
    try {
      runAs = chromiumRunAs(opts.user, asRoot);
      const args = [...launchArgs(denyProxy.address, asRoot && runAs === null), ...(opts.extraArgs ?? [])];
      const env = chromiumEnv(userDataDir, ownTmp ? chromiumTmp : null);
      let how: { executablePath: string; args: string[]; ignoreDefaultArgs?: boolean };
      if (runAs === null) how = { executablePath: opts.executable, args };
      else {
        chmodSync(baseDir, 0o711); // traversable, not listable or writable: the base stays ours
        for (const dir of [userDataDir, chromiumTmp]) chownSync(dir, runAs.uid, runAs.gid);
        // setpriv execs Chromium with the flags puppeteer would have given it.
        const chromeArgs = await puppeteer.defaultArgs({ headless: true, userDataDir, args: [...args, "--remote-debugging-pipe"] });
        how = {
          executablePath: runAs.setpriv,
          ignoreDefaultArgs: true,
          args: [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, "--clear-groups", "--", opts.executable, ...chromeArgs],
        };
      }
      browser = await puppeteer.launch({
        ...how,
        headless: true,
        pipe: true, // no DevTools TCP port on the host
        userDataDir,
        env,
        defaultViewport: { width: 1280, height: 800 }, // §16.2
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: opts.launchTimeoutMs,
        protocolTimeout: 120_000,
        waitForInitialPage: false,
      });
    } catch (err) {
      await denyProxy.close();
      const socketDir = singletonSocketDir(userDataDir);
      if (socketDir) rmSync(socketDir, { recursive: true, force: true });
      rmSync(baseDir, { recursive: true, force: true });
      throw err;
    }
    const pid = browser.process()?.pid;
    opts.log.info("chromium started", { pid, user: runAs?.name ?? (asRoot ? "root (no sandbox)" : "own") });
    const handle = new BrowserHandle(browser, pid, baseDir, denyProxy, opts.log);
    handle.socketDir = singletonSocketDir(userDataDir);
    return handle;
  }

  /** Called once when the browser is gone; returns an unsubscribe function. */
  onDeath(fn: () => void): () => void {
    if (this.dead) {
      fn();
      return () => {};
    }
    this.deathListeners.add(fn);
    return () => this.deathListeners.delete(fn);
  }

  memory(): TreeMemory | null {
    return this.pid !== undefined && !this.dead ? processTreeMemory(this.pid) : null;
  }

  /** Closes the browser (graceful, then SIGKILL after 5 s) and removes its user data directory. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        if (!this.dead) {
          const graceful = this.browser.close().catch(() => {});
          const timer = new Promise<void>((r) => setTimeout(r, 5000).unref?.());
          await Promise.race([graceful, timer]);
        }
        this.kill();
        await this.cleanup();
      })();
    }
    return this.closing;
  }

  /** SIGKILL the browser's whole process group (Chromium is started as a group leader: renderers, zygote and
   * utility processes go with it, even when the main process is already gone). */
  kill(): void {
    const proc = this.browser.process();
    if (this.pid !== undefined && process.platform !== "win32") {
      try {
        process.kill(-this.pid, "SIGKILL");
      } catch {
        /* group already empty */
      }
    }
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      try {
        proc.kill("SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }

  private onDisconnected(): void {
    if (this.dead) return;
    this.dead = true;
    if (!this.closing) this.log.warn("chromium disconnected", { pid: this.pid });
    for (const fn of this.deathListeners) {
      try {
        fn();
      } catch {
        /* ignore */
      }
    }
    this.deathListeners.clear();
    // A crashed browser leaves its process tree possibly half-alive: make sure it is gone, then clean up.
    this.kill();
    void this.cleanup();
  }

  private cleaning: Promise<void> | null = null;
  /** Waits for the process to exit, then removes the user data directory and the deny-all proxy. Memoized. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      await this.denyProxy.close().catch(() => {});
      const proc = this.browser.process();
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        await new Promise<void>((r) => {
          const t = setTimeout(r, 3000);
          proc.once("exit", () => {
            clearTimeout(t);
            r();
          });
        });
      }
      // Stragglers of the group (utility processes) may still write into the profile for a moment.
      for (const dir of [this.baseDir, this.socketDir]) {
        if (dir === null) continue;
        for (const wait of [0, 200, 1000]) {
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          try {
            rmSync(dir, { recursive: true, force: true });
          } catch (err) {
            this.log.warn("could not remove a chromium directory", { error: (err as Error).message });
          }
          if (!existsSync(dir)) break;
        }
      }
    })();
    return this.cleaning;
  }
}

const DIR_PREFIX = "secbox-chromium-";
const OWNER_FILE = "owner.pid";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Removes the directories of browsers whose Secbox process is gone without cleaning up (kill -9, power loss: ~2.4 MB
 * each). Only directories of this user that hold an owner file naming a dead process; those of live processes
 * (another Secbox on this host) are left alone.
 */
export function sweepStaleDirs(log: Logger): number {
  let removed = 0;
  const base = tmpdir();
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return 0;
  }
  const me = typeof process.getuid === "function" ? process.getuid() : -1;
  for (const name of names) {
    const dir = join(base, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || st.uid !== me) continue;
      const owner = Number(readFileSync(join(dir, OWNER_FILE), "latin1"));
      if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || alive(owner)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed++;
    } catch {
      /* no owner file (not ours, or being created), or already gone */
    }
  }
  if (removed > 0) log.info("removed chromium directories left by a stopped process", { count: removed });
  return removed;
}

/**
 * The org.chromium.Chromium.XXXXXX directory `<userDataDir>/SingletonSocket` points to, when it lies outside the
 * user data directory (null otherwise, or when there is no such link).
 */
function singletonSocketDir(userDataDir: string): string | null {
  let target: string;
  try {
    target = readlinkSync(join(userDataDir, "SingletonSocket"));
  } catch {
    return null;
  }
  const dir = dirname(resolve(userDataDir, target));
  if (dir === userDataDir || dir.startsWith(userDataDir + sep)) return null;
  return basename(dir).startsWith("org.chromium.") ? dir : null;
}
