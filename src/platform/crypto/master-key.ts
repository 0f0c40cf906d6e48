// The master key encrypts secrets at rest. From `security.master_key`, else `<data_dir>/master.key`
// (64 hex chars, created 0600 on first start; an existing file readable by others is tightened to 0600). The database keeps a check value so a wrong key stops the
// start instead of silently failing to decrypt (supplement §23.1).
import { existsSync, readFileSync, writeFileSync, chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createHmac, randomBytes } from "node:crypto";
import type { Db } from "../db/db";
import { tightenToOwnerOnly, type OnModeTightened } from "../db/sqlite";

export class MasterKeyError extends Error {}

function checkValue(key: Uint8Array) {
  return createHmac("sha256", key).update("secbox master key check v1").digest("hex");
}

export function readOrCreateMasterKey(configured: string, dataDir: string, onTightened?: OnModeTightened): Uint8Array {
  if (configured !== "") return Buffer.from(configured, "hex");
  const path = join(dataDir, "master.key");
  if (existsSync(path)) {
    tightenToOwnerOnly(path, onTightened);
    const text = readFileSync(path, "utf8").trim();
    if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new MasterKeyError(`${path} does not hold 64 hex characters`);
    return Buffer.from(text, "hex");
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  return key;
}

/** Stores the check value on first use; afterwards refuses a key that does not match it. */
export async function verifyMasterKey(db: Db, key: Uint8Array): Promise<void> {
  const expected = checkValue(key);
  await db.run("INSERT INTO server_state (key, value) VALUES ('master_key_check', ?) ON CONFLICT (key) DO NOTHING", [expected]);
  const row = await db.get<{ value: string }>("SELECT value FROM server_state WHERE key = 'master_key_check'");
  if (row?.value !== expected) {
    throw new MasterKeyError(
      "the master key does not match this database (security.master_key or <data_dir>/master.key changed); secrets could not be decrypted",
    );
  }
}
