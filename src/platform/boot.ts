// Opens everything a command needs: database (migrated), master key (verified), logger, clock.
import type { Config } from "../config/schema";
import { readOrCreateMasterKey, verifyMasterKey } from "./crypto/master-key";
import { SecretBox } from "./crypto/secret-box";
import { openDatabase } from "./db/db";
import { migrate } from "./db/migrate";
import { createLogger, type Logger } from "./log";
import { systemClock, VERSION, type Clock, type Runtime } from "./runtime";

export interface BootOptions {
  clock?: Clock;
  log?: Logger;
}

export async function openRuntime(config: Config, opts: BootOptions = {}): Promise<Runtime & { close(): void }> {
  const db = openDatabase(config.server.data_dir);
  try {
    migrate(db);
    const key = readOrCreateMasterKey(config.security.master_key, config.server.data_dir);
    await verifyMasterKey(db, key);
    return {
      config,
      db,
      clock: opts.clock ?? systemClock,
      secretBox: new SecretBox(key),
      log: opts.log ?? createLogger(config.server.log_level),
      version: VERSION,
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
