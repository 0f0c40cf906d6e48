// Opens the configured backend: `[database] url` empty = SQLite in the data directory, else PostgreSQL.
import type { Config } from "../../config/schema";
import type { Db } from "./db";
import { PgDb } from "./postgres";
import { ensureDataDir, openDatabase, type OnModeTightened } from "./sqlite";

export interface OpenOptions {
  onTightened?: OnModeTightened;
  /** A CLI process: it announces its commits so running servers see them (Db.externalVersion). */
  announceCommits?: boolean;
}

export async function openDb(config: Config, opts: OpenOptions = {}): Promise<Db> {
  if (config.database.url === "") return openDatabase(config.server.data_dir, opts.onTightened, { announceCommits: opts.announceCommits });
  // The data directory still holds master.key (unless security.master_key is set) and Chromium's profiles.
  ensureDataDir(config.server.data_dir);
  try {
    return await PgDb.connect(config.database.url, {
      max: config.database.pool_size,
      announceCommits: opts.announceCommits,
    });
  } catch (err) {
    throw new Error(`cannot connect to PostgreSQL (database.url): ${(err as Error).message}`);
  }
}
