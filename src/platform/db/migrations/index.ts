// Numbered SQL migrations, embedded in the binary as text. Append new files here in order.
//
// A migration is written once for SQLite and runs on PostgreSQL through dialect.ts's migrationToPostgres. Where the
// two cannot share a text (FTS5 and triggers on SQLite, extensions and GIN indexes on PostgreSQL), the migration
// also names a `NNNN_name.pg.sql` file as `postgres`: PostgreSQL runs that file as written, untranslated. A migration
// may add a data step in TypeScript (`data`, run after its SQL in the same transaction) where SQL cannot do the work.
import m0001 from "./0001_init.sql" with { type: "text" };
import m0002 from "./0002_mail.sql" with { type: "text" };
import m0003 from "./0003_shares.sql" with { type: "text" };
import m0004 from "./0004_certificates.sql" with { type: "text" };
import m0005 from "./0005_csp.sql" with { type: "text" };
import m0006 from "./0006_kv.sql" with { type: "text" };
import m0007 from "./0007_responders.sql" with { type: "text" };
import m0008 from "./0008_trackers.sql" with { type: "text" };
import m0009 from "./0009_tracker_schedule_floor.sql" with { type: "text" };
import m0010 from "./0010_email_proof.sql" with { type: "text" };
import m0011 from "./0011_durability.sql" with { type: "text" };
import m0012 from "./0012_search.sql" with { type: "text" };
import m0013 from "./0013_instances.sql" with { type: "text" };
import m0015 from "./0015_storage.sql" with { type: "text" };
import m0016 from "./0016_search_index.sql" with { type: "text" };
import m0016pg from "./0016_search_index.pg.sql" with { type: "text" };
import m0017 from "./0017_response_status.sql" with { type: "text" };
import { trackersWithoutNul } from "./trackers-without-nul";
import type { Db } from "../db";

export interface Migration {
  version: number;
  name: string;
  /** SQLite's text (and PostgreSQL's, translated, when `postgres` is absent); "" when the migration is only a data
   *  step. */
  sql: string;
  /** PostgreSQL's own text, run as written. */
  postgres?: string;
  /** Rows rewritten in TypeScript, after the SQL, inside the migration's transaction. */
  data?: (tx: Db) => Promise<void>;
}

export const MIGRATIONS: Migration[] = [
  { version: 1, name: "0001_init", sql: m0001 },
  { version: 2, name: "0002_mail", sql: m0002 },
  { version: 3, name: "0003_shares", sql: m0003 },
  { version: 4, name: "0004_certificates", sql: m0004 },
  { version: 5, name: "0005_csp", sql: m0005 },
  { version: 6, name: "0006_kv", sql: m0006 },
  { version: 7, name: "0007_responders", sql: m0007 },
  { version: 8, name: "0008_trackers", sql: m0008 },
  { version: 9, name: "0009_tracker_schedule_floor", sql: m0009 },
  { version: 10, name: "0010_email_proof", sql: m0010 },
  { version: 11, name: "0011_durability", sql: m0011 },
  { version: 12, name: "0012_search", sql: m0012 },
  { version: 13, name: "0013_instances", sql: m0013 },
  { version: 14, name: "0014_trackers_without_nul", sql: "", data: trackersWithoutNul },
  { version: 15, name: "0015_storage", sql: m0015 },
  { version: 16, name: "0016_search_index", sql: m0016, postgres: m0016pg },
  { version: 17, name: "0017_response_status", sql: m0017 },
];
