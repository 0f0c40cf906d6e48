// SQL for the server status level, the public URL `serve` last started with, and the database health probe.
import type { Db } from "../../platform/db/db";

export const statusStore = {
  async level(db: Db): Promise<string | undefined> {
    return (await db.get<{ value: string }>("SELECT value FROM server_state WHERE key = 'status_level'"))?.value;
  },
  setLevel: (db: Db, level: string) =>
    db.run("INSERT INTO server_state (key, value) VALUES ('status_level', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [level]),
  /** The public URL `serve` last started with (the CLI's links use it when none is configured, §27). */
  async publicUrl(db: Db): Promise<string | undefined> {
    return (await db.get<{ value: string }>("SELECT value FROM server_state WHERE key = 'public_url'"))?.value;
  },
  setPublicUrl: (db: Db, url: string) =>
    db.run("INSERT INTO server_state (key, value) VALUES ('public_url', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [url]),
  async ping(db: Db): Promise<boolean> {
    return (await db.get<{ ok: number }>("SELECT 1 AS ok"))?.ok === 1;
  },
};
