// SQL for shares.
import type { Db } from "../db/db";

export interface ShareRow {
  id: string;
  user_id: string;
  resource_type: string;
  resource_id: string;
  created_at: number;
}

export const shareStore = {
  byResource: (db: Db, type: string, resourceId: string) =>
    db.get<ShareRow>("SELECT * FROM shares WHERE resource_type = ? AND resource_id = ?", [type, resourceId]),
  byId: (db: Db, id: string) => db.get<ShareRow>("SELECT * FROM shares WHERE id = ?", [id]),
  async insertIfAbsent(db: Db, r: ShareRow) {
    await db.run(
      "INSERT INTO shares (id, user_id, resource_type, resource_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (resource_type, resource_id) DO NOTHING",
      [r.id, r.user_id, r.resource_type, r.resource_id, r.created_at],
    );
  },
  remove: (db: Db, type: string, resourceId: string) => db.run("DELETE FROM shares WHERE resource_type = ? AND resource_id = ?", [type, resourceId]),
};
