// `secbox data migrate --from sqlite:PATH --to postgres://…` (issue 26; README "Running several instances"): copies a
// whole instance — every table, history included — from one backend to the other and verifies the row counts
// (platform/db/copy.ts). PATH is a data directory (its secbox.db) or the database file. The other direction
// (`--from postgres://… --to sqlite:PATH`) works the same way. Stop the servers first; the target must be empty, and
// the servers that use it need the same master key (security.master_key, or the data directory's master.key).
import { closeSync, existsSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import { copyDatabase, CopyError } from "../platform/db/copy";
import type { Db } from "../platform/db/db";
import { PgDb } from "../platform/db/postgres";
import { openDatabase, SqliteDb } from "../platform/db/sqlite";
import { EXIT_OK, helpRequested, parseFlags, printJson, requireFlag, RuntimeError, UsageError, type Command } from "./common";

/** A `sqlite:PATH` or `postgres://…` location, opened. A missing SQLite source is an error, not a new empty file. */
async function open(location: string, flag: string, mustExist: boolean): Promise<Db> {
  if (/^postgres(ql)?:\/\/./.test(location)) {
    try {
      return await PgDb.connect(location, { max: 2 });
    } catch (err) {
      throw new RuntimeError(`--${flag}: cannot connect to PostgreSQL: ${(err as Error).message}`);
    }
  }
  if (!location.startsWith("sqlite:") || location.length === "sqlite:".length) throw new UsageError(`--${flag} must be sqlite:PATH or postgres://…`);
  const path = location.slice("sqlite:".length);
  const isDir = existsSync(path) ? statSync(path).isDirectory() : !path.endsWith(".db");
  const file = isDir ? join(path, "secbox.db") : path;
  if (mustExist && !existsSync(file)) throw new RuntimeError(`--${flag}: no database at ${file}`);
  // A new data directory or database file is made owner-only, as `serve` makes them.
  if (isDir) return openDatabase(path);
  if (!existsSync(file)) closeSync(openSync(file, "a", 0o600));
  return new SqliteDb(file);
}

export const migrateDataCmd: Command = {
  name: "migrate",
  summary: "copy a whole instance between backends (every table, history included) and verify the row counts",
  usage: "secbox data migrate --from sqlite:PATH --to postgres://USER@HOST/DB   (or --from postgres://… --to sqlite:PATH)",
  async run(argv) {
    const { values } = parseFlags(argv, { from: { type: "string" }, to: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const from = requireFlag(values, "from");
    const to = requireFlag(values, "to");
    const source = await open(from, "from", true);
    try {
      const target = await open(to, "to", false);
      try {
        if (source.dialect === target.dialect) throw new UsageError("--from and --to must be different backends (one sqlite:, one postgres://)");
        const report = await copyDatabase(source, target, (table, rows) => process.stderr.write(`copied ${table}: ${rows} rows\n`));
        printJson(report);
        return EXIT_OK;
      } catch (err) {
        if (err instanceof CopyError) throw new RuntimeError(err.message);
        throw err;
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  },
};
