// SQL for API keys.
import type { Db } from "../../platform/db/db";

export interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

export const apiKeysStore = {
  byHash: (db: Db, hash: string) => db.get<ApiKeyRow>("SELECT * FROM api_keys WHERE token_hash = ?", [hash]),
  touch: (db: Db, id: string, now: number) => db.run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [now, id]),
};
