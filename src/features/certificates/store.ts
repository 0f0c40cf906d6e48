// SQL for private keys and certificate templates, and the mapping of their rows to wire objects (contract.ts; the
// services add the tags). Metadata queries never select the sealed key blob.
import type { Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import type { CertificateTemplate, KeyAlgorithm, PrivateKey, TemplateAttributes } from "./contract";

export interface KeyMetaRow {
  id: string;
  user_id: string;
  name: string;
  alg: string;
  encrypted: number;
  created_at: number;
  updated_at: number;
}

export type KeyRow = KeyMetaRow & { key_enc: Uint8Array };

export interface TemplateRow {
  id: string;
  user_id: string;
  name: string;
  attributes: string;
  created_at: number;
  updated_at: number;
}

/** A key's metadata as the API answers it (`PrivateKey` without its tags): never key material. */
export const toPrivateKey = (r: KeyMetaRow): Omit<PrivateKey, "tags" | "tagIds"> => ({
  id: r.id,
  name: r.name,
  alg: JSON.parse(r.alg) as KeyAlgorithm,
  encrypted: r.encrypted === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** A template as the API answers it (`CertificateTemplate` without its tags); its attributes as stored. */
export const toTemplate = (r: TemplateRow): Omit<CertificateTemplate, "tags" | "tagIds"> & { attributes: TemplateAttributes } => ({
  id: r.id,
  name: r.name,
  attributes: JSON.parse(r.attributes) as TemplateAttributes,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const KEY_META = "e.id, e.user_id, e.name, e.alg, e.encrypted, e.created_at, e.updated_at";

export const keysStore = {
  list: (db: Db, userId: string, query: ListQuery) =>
    listPage<KeyMetaRow>(db, userId, query, { table: "private_keys", entityType: "privateKey", columns: KEY_META }),

  get: (db: Db, userId: string, id: string) =>
    db.get<KeyMetaRow>(`SELECT ${KEY_META} FROM private_keys e WHERE e.user_id = ? AND e.id = ?`, [userId, id]),

  getWithKey: (db: Db, userId: string, id: string) => db.get<KeyRow>("SELECT * FROM private_keys WHERE user_id = ? AND id = ?", [userId, id]),

  async existsByName(db: Db, userId: string, name: string, exceptId = ""): Promise<boolean> {
    return (await db.get("SELECT 1 AS x FROM private_keys WHERE user_id = ? AND name = ? AND id <> ?", [userId, name, exceptId])) !== undefined;
  },

  insert: (db: Db, r: KeyRow) =>
    db.run("INSERT INTO private_keys (id, user_id, name, alg, encrypted, key_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      r.alg,
      r.encrypted,
      r.key_enc,
      r.created_at,
      r.updated_at,
    ]),

  rename: (db: Db, userId: string, id: string, name: string, now: number) =>
    db.run("UPDATE private_keys SET name = ?, updated_at = ? WHERE user_id = ? AND id = ?", [name, now, userId, id]),

  /** Replaces the key blob only when it is still the one the caller read (`previous`), so concurrent changes cannot mix. */
  setKey: (db: Db, userId: string, id: string, encrypted: number, keyEnc: Uint8Array, previous: Uint8Array, now: number) =>
    db.run("UPDATE private_keys SET encrypted = ?, key_enc = ?, updated_at = ? WHERE user_id = ? AND id = ? AND key_enc = ?", [
      encrypted,
      keyEnc,
      now,
      userId,
      id,
      previous,
    ]),

  touch: (db: Db, userId: string, id: string, now: number) =>
    db.run("UPDATE private_keys SET updated_at = ? WHERE user_id = ? AND id = ?", [now, userId, id]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM private_keys WHERE user_id = ? AND id = ?", [userId, id]),

  // ---- user data (export, import, clone) ----

  allOfUser: (db: Db, userId: string) => db.all<KeyRow>("SELECT * FROM private_keys WHERE user_id = ? ORDER BY name, id", [userId]),
  refs: (db: Db, userId: string) => db.all<{ id: string; name: string }>("SELECT id, name FROM private_keys WHERE user_id = ?", [userId]),
  /** The user's count, under a lock held until the transaction ends (limit checks). */
  count: async (db: Db, userId: string): Promise<number> => {
    await db.lock(`count:private_keys:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM private_keys WHERE user_id = ?", [userId]))?.n ?? 0;
  },

  /** Overwrite by an import: name, algorithm and key replaced. */
  replace: (db: Db, r: KeyRow) =>
    db.run("UPDATE private_keys SET name = ?, alg = ?, encrypted = ?, key_enc = ?, updated_at = ? WHERE user_id = ? AND id = ?", [
      r.name,
      r.alg,
      r.encrypted,
      r.key_enc,
      r.updated_at,
      r.user_id,
      r.id,
    ]),
};

export const templatesStore = {
  list: (db: Db, userId: string, query: ListQuery) =>
    listPage<TemplateRow>(db, userId, query, { table: "certificate_templates", entityType: "certificateTemplate" }),

  get: (db: Db, userId: string, id: string) => db.get<TemplateRow>("SELECT * FROM certificate_templates WHERE user_id = ? AND id = ?", [userId, id]),

  async ownerOf(db: Db, id: string): Promise<string | undefined> {
    return (await db.get<{ user_id: string }>("SELECT user_id FROM certificate_templates WHERE id = ?", [id]))?.user_id;
  },

  async existsByName(db: Db, userId: string, name: string, exceptId = ""): Promise<boolean> {
    return (
      (await db.get("SELECT 1 AS x FROM certificate_templates WHERE user_id = ? AND name = ? AND id <> ?", [userId, name, exceptId])) !== undefined
    );
  },

  insert: (db: Db, r: TemplateRow) =>
    db.run("INSERT INTO certificate_templates (id, user_id, name, attributes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      r.attributes,
      r.created_at,
      r.updated_at,
    ]),

  update: (db: Db, userId: string, id: string, fields: { name: string; attributes: string; updatedAt: number }) =>
    db.run("UPDATE certificate_templates SET name = ?, attributes = ?, updated_at = ? WHERE user_id = ? AND id = ?", [
      fields.name,
      fields.attributes,
      fields.updatedAt,
      userId,
      id,
    ]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM certificate_templates WHERE user_id = ? AND id = ?", [userId, id]),

  // ---- user data (export, import, clone) ----

  allOfUser: (db: Db, userId: string) => db.all<TemplateRow>("SELECT * FROM certificate_templates WHERE user_id = ? ORDER BY name, id", [userId]),
  refs: (db: Db, userId: string) => db.all<{ id: string; name: string }>("SELECT id, name FROM certificate_templates WHERE user_id = ?", [userId]),
  /** The user's count, under a lock held until the transaction ends (limit checks). */
  count: async (db: Db, userId: string): Promise<number> => {
    await db.lock(`count:certificate_templates:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM certificate_templates WHERE user_id = ?", [userId]))?.n ?? 0;
  },
};
