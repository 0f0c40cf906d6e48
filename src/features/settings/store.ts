// SQL for per-user settings (supplement §9): one JSON object per user, stored as text.
import type { Db } from "../../platform/db/db";

export const settingsStore = {
  async get(db: Db, userId: string): Promise<string | undefined> {
    return (await db.get<{ data: string }>("SELECT data FROM user_settings WHERE user_id = ?", [userId]))?.data;
  },

  put: (db: Db, userId: string, data: string, now: number) =>
    db.run(
      "INSERT INTO user_settings (user_id, data, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
      [userId, data, now],
    ),

  remove: (db: Db, userId: string) => db.run("DELETE FROM user_settings WHERE user_id = ?", [userId]),
};
