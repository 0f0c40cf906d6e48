// Opens everything a command needs: database (migrated), master key (verified), logger, clock.
import type { Config } from "../config/schema";
import { readOrCreateMasterKey, verifyMasterKey } from "./crypto/master-key";
import { SecretBox } from "./crypto/secret-box";
import { migrate } from "./db/migrate";
import { openDb } from "./db/open";
import { createLogger, type Logger } from "./log";
import { systemClock, VERSION, type Clock, type Runtime } from "./runtime";

export interface BootOptions {
  clock?: Clock;
  log?: Logger;
  /** A CLI command (not a server): on PostgreSQL its commits are announced to running servers. */
  cli?: boolean;
}

export async function openRuntime(config: Config, opts: BootOptions = {}): Promise<Runtime & { close(): Promise<void> }> {
  const log = opts.log ?? createLogger(config.server.log_level);
  // Data files are owner-only (0600); a looser existing one is tightened, and said so.
  const onTightened = (path: string, previousMode: number) =>
    log.warn("file was readable by other users; its mode is now 0600", { path, previousMode: previousMode.toString(8).padStart(4, "0") });
  const db = await openDb(config, { onTightened, announceCommits: opts.cli });
  try {
    await migrate(db);
    const key = readOrCreateMasterKey(config.security.master_key, config.server.data_dir, onTightened);
    await verifyMasterKey(db, key);
    return {
      config,
      db,
      clock: opts.clock ?? systemClock,
      secretBox: new SecretBox(key),
      log,
      version: VERSION,
      close: () => db.close(),
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
