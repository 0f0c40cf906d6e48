// The free-disk guard (supplement §28, `[server] min_free_disk_mib`): while the data directory's file system has less
// free space than that, writes that add data are refused (API 507 INSUFFICIENT_STORAGE, responder captures dropped,
// Secbox.kv writes failing in scripts, tracker runs storing no revision), so SQLite never meets a full disk in the
// middle of a transaction; reads and deletes keep working. The free space is read periodically (every 5 s,
// `fs.statfs`), never per write: `low` is a cached flag.
//
// PostgreSQL: the database lives on the database server's disk, which this process cannot see; the guard is off (no
// data directory is watched) and a full disk there fails the write with an error, as PostgreSQL does.
import { statfs } from "node:fs/promises";
import type { Logger } from "../log";

/** Bytes available to this (unprivileged) process on the file system holding `dir`. */
export type FreeSpaceReader = (dir: string) => Promise<number>;

export const statfsFree: FreeSpaceReader = async (dir) => {
  const s = await statfs(dir);
  return Number(s.bavail) * Number(s.bsize);
};

export const DISK_CHECK_MS = 5000;
const MiB = 1024 * 1024;

export interface DiskGuardOptions {
  /** The directory whose file system holds the database; null = no guard (PostgreSQL). */
  dir: string | null;
  minFreeMib: number;
  log: Logger;
  /** Test seam (like the clock): where the free space comes from. Default: statfs. */
  read?: FreeSpaceReader;
  intervalMs?: number;
}

export class DiskGuard {
  /** Below the threshold at the last check. */
  private isLow = false;
  /** Free bytes at the last check (undefined before the first, or when off). */
  lastFree: number | undefined;
  /** The free-space reading; tests replace it, then call check(). */
  read: FreeSpaceReader;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly opts: DiskGuardOptions) {
    this.read = opts.read ?? statfsFree;
  }

  /** The guard watches a directory (SQLite, min_free_disk_mib > 0). */
  get active(): boolean {
    return this.opts.dir !== null && this.opts.minFreeMib > 0;
  }

  /** Writes that add data are refused now. */
  get low(): boolean {
    return this.isLow;
  }

  get minFreeBytes(): number {
    return this.opts.minFreeMib * MiB;
  }

  /** Reads the free space now and updates `low` (a failed reading keeps the last state). */
  async check(): Promise<boolean> {
    if (!this.active) return (this.isLow = false);
    let free: number;
    try {
      free = await this.read(this.opts.dir!);
    } catch (err) {
      this.opts.log.warn("storage: reading the free disk space failed", { dir: this.opts.dir, error: String((err as Error)?.message ?? err) });
      return this.isLow;
    }
    this.lastFree = free;
    const low = free < this.minFreeBytes;
    if (low !== this.isLow) {
      if (low)
        this.opts.log.error(
          "storage: free disk space is below server.min_free_disk_mib; writes that add data are refused (507) until space is freed",
          {
            dir: this.opts.dir,
            freeMib: Math.floor(free / MiB),
            minFreeMib: this.opts.minFreeMib,
          },
        );
      else
        this.opts.log.warn("storage: free disk space is back above server.min_free_disk_mib; writes are accepted again", {
          freeMib: Math.floor(free / MiB),
        });
    }
    return (this.isLow = low);
  }

  /** Checks at once, then every 5 s (unref'd: it never keeps the process alive). */
  async start(): Promise<void> {
    if (this.timer || !this.active) return;
    await this.check();
    this.timer = setInterval(() => void this.check(), this.opts.intervalMs ?? DISK_CHECK_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
