// SQL for per-user settings (supplement §9): one JSON object per user, stored as text; the stored text ↔ the wire
// `UserSettings` (contract.ts: known keys only, in response order).
import type { Db } from "../../platform/db/db";
import { SETTING_KEYS, type UserSettings } from "./contract";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The known keys of `raw` (set, non-null), in response order. */
export function knownSettings(raw: unknown): UserSettings {
  const out: Record<string, unknown> = {};
  if (isObject(raw)) for (const key of SETTING_KEYS) if (raw[key] !== undefined && raw[key] !== null) out[key] = raw[key];
  return out as UserSettings;
}

export const settingsStore = {
  /** The stored settings: `{}` when none, `null` when the stored text is not JSON (the caller logs it). */
  async get(db: Db, userId: string): Promise<UserSettings | null> {
    const data = (await db.get<{ data: string }>("SELECT data FROM user_settings WHERE user_id = ?", [userId]))?.data;
    if (data === undefined) return {};
    try {
      return knownSettings(JSON.parse(data));
    } catch {
      return null;
    }
  },

  /** Stores `settings` (known keys in response order); an empty object removes the row. */
  async put(db: Db, userId: string, settings: UserSettings, now: number): Promise<void> {
    if (Object.keys(settings).length === 0) {
      await db.run("DELETE FROM user_settings WHERE user_id = ?", [userId]);
      return;
    }
    await db.run(
      "INSERT INTO user_settings (user_id, data, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
      [userId, JSON.stringify(settings), now],
    );
  },
};
