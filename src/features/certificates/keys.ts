// Private keys (supplement §12.2): generated off the event loop, kept as PKCS#8 (encrypted PKCS#8 with a
// passphrase), the blob sealed with the master key; metadata over HTTP, key material only through `_export`.
// Passphrase work (PBKDF2 encryption and decryption, PKCS#12) runs on the work pool under the user's share
// (tasks.ts); a stored key asking for more than 1,000,000 PBKDF2 iterations is refused before any derivation (§28).
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { duplicateName, invalid, isUniqueViolation, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { normalizeName, pathId } from "../../platform/core/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";
import { parseKeyAlg } from "./algorithms";
import type { ExportedFile, KeyAlgorithm, KeyCreateInput, KeyExportInput, KeyUpdateInput, PrivateKey } from "./contract";
import { exportedFile, format, MIME, optionalPassphrase } from "./files";
import { generateKeyPair } from "./keygen";
import { derToPem, type OpenSsl } from "./openssl";
import { BadPassphraseError, KdfCostError, pkcs8Problem } from "./pkcs";
import type { PkcsRunner } from "./tasks";
import { KEY_EXPORT_FORMATS, NAME_MAX } from "./shared-rules";
import { keysStore, toPrivateKey, type KeyMetaRow, type KeyRow } from "./store";

const present = (v: unknown) => v !== undefined && v !== null;
const badPassphrase = (message: string) => invalid(message, "BAD_PASSPHRASE");

export class PrivateKeys {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
    private readonly openssl: OpenSsl,
    private readonly pkcs: PkcsRunner,
  ) {}

  private async toWire(rows: KeyMetaRow[]): Promise<PrivateKey[]> {
    return this.tags.decorate("privateKey", rows.map(toPrivateKey));
  }

  private seal(id: string, blob: Uint8Array) {
    return this.rt.secretBox.seal(blob, `privateKey:${id}`);
  }

  private open(row: KeyRow): Uint8Array {
    return new Uint8Array(this.rt.secretBox.open(row.key_enc, `privateKey:${row.id}`));
  }

  /** The PKCS#8 DER of a stored key; an encrypted key needs its passphrase (missing/wrong → 400 BAD_PASSPHRASE). */
  private async unlock(row: KeyRow, passphrase: string | undefined, field = "passphrase"): Promise<Uint8Array> {
    const blob = this.open(row);
    if (row.encrypted !== 1) return blob;
    if (passphrase === undefined) throw badPassphrase(`${field}: the key is encrypted; its passphrase is required`);
    try {
      return await this.pkcs.decryptPkcs8(row.user_id, blob, passphrase);
    } catch (err) {
      if (err instanceof BadPassphraseError) throw badPassphrase(`${field}: wrong passphrase`);
      if (err instanceof KdfCostError) throw invalid(`${field}: the stored key ${err.message} (delete it and import it again with fewer)`);
      throw err;
    }
  }

  async list(userId: string, rawQuery: Record<string, unknown>): Promise<{ items: PrivateKey[]; total: number }> {
    const { rows, total } = await keysStore.list(this.rt.db, userId, parseListQuery(rawQuery));
    return { items: await this.toWire(rows), total };
  }

  async get(userId: string, rawId: string | undefined): Promise<PrivateKey> {
    const row = await keysStore.get(this.rt.db, userId, pathId(rawId, "Private key"));
    if (!row) throw notFound("Private key");
    return (await this.toWire([row]))[0]!;
  }

  async create(user: AuthUser, body: KeyCreateInput): Promise<PrivateKey> {
    if (!present(body.keyName)) throw invalid("keyName: is required");
    const name = normalizeName(body.keyName, NAME_MAX, "keyName");
    if (!present(body.alg)) throw invalid("alg: is required");
    const alg = parseKeyAlg(body.alg, "alg");
    const passphrase = optionalPassphrase(body.passphrase, "passphrase");
    const tagIds = present(body.tagIds) ? await this.tags.resolveTagIds(user.id, body.tagIds) : [];
    if (alg.keyType === "dsa") this.openssl.require();
    // Cheap check before the (possibly long) key generation; the insert checks again.
    if (await keysStore.existsByName(this.rt.db, user.id, name)) throw duplicateName("Private key", name);
    const { pkcs8 } = await generateKeyPair(alg, this.openssl);
    const blob = passphrase === undefined ? pkcs8 : await this.pkcs.encryptPkcs8(user.id, pkcs8, passphrase);
    const now = nowSec(this.rt.clock);
    const id = newId();
    const row: KeyRow = {
      id,
      user_id: user.id,
      name,
      alg: JSON.stringify(alg),
      encrypted: passphrase === undefined ? 0 : 1,
      key_enc: this.seal(id, blob),
      created_at: now,
      updated_at: now,
    };
    try {
      await this.rt.db.tx(async (tx) => {
        if (await keysStore.existsByName(tx, user.id, name)) throw duplicateName("Private key", name);
        await keysStore.insert(tx, row);
        await this.tags.setEntityTags(tx, "privateKey", id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Private key", name);
      throw err;
    }
    return (await this.toWire([row]))[0]!;
  }

  async update(userId: string, rawId: string | undefined, body: KeyUpdateInput): Promise<void> {
    const hasName = present(body.keyName);
    const hasTags = present(body.tagIds);
    const hasNewPassphrase = body.newPassphrase !== undefined; // null = remove the passphrase (§12.2)
    if (!hasName && !hasTags && !hasNewPassphrase) throw invalid("keyName, newPassphrase, tagIds: at least one is required");
    const name = hasName ? normalizeName(body.keyName, NAME_MAX, "keyName") : undefined;
    const passphrase = optionalPassphrase(body.passphrase, "passphrase");
    const newPassphrase = body.newPassphrase === null ? null : optionalPassphrase(body.newPassphrase, "newPassphrase");
    if (typeof newPassphrase === "string" && newPassphrase === passphrase) throw invalid("newPassphrase: must differ from passphrase");
    const id = pathId(rawId, "Private key");
    const current = await keysStore.getWithKey(this.rt.db, userId, id);
    if (!current) throw notFound("Private key");
    const tagIds = hasTags ? await this.tags.resolveTagIds(userId, body.tagIds) : undefined;

    let newBlob: { encrypted: number; sealed: Uint8Array } | undefined;
    if (hasNewPassphrase) {
      if (newPassphrase === null && current.encrypted !== 1) {
        if (!hasName && !hasTags) throw invalid("newPassphrase: the key has no passphrase to remove; nothing to change");
      } else {
        const plain = await this.unlock(current, passphrase);
        const blob = newPassphrase === null || newPassphrase === undefined ? plain : await this.pkcs.encryptPkcs8(userId, plain, newPassphrase);
        newBlob = { encrypted: newPassphrase ? 1 : 0, sealed: this.seal(id, blob) };
      }
    }
    const now = nowSec(this.rt.clock);
    try {
      await this.rt.db.tx(async (tx) => {
        if (name !== undefined && name !== current.name) {
          if (await keysStore.existsByName(tx, userId, name, id)) throw duplicateName("Private key", name);
          if ((await keysStore.rename(tx, userId, id, name, now)).changes === 0) throw notFound("Private key");
        }
        if (newBlob) {
          const { changes } = await keysStore.setKey(tx, userId, id, newBlob.encrypted, newBlob.sealed, current.key_enc, now);
          if (changes === 0) throw invalid("passphrase: the key changed while it was being updated; retry");
        }
        if ((await keysStore.touch(tx, userId, id, now)).changes === 0) throw notFound("Private key");
        if (tagIds !== undefined) await this.tags.setEntityTags(tx, "privateKey", id, userId, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Private key", name ?? "");
      throw err;
    }
  }

  async delete(userId: string, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "Private key");
    await this.rt.db.tx(async (tx) => {
      if ((await keysStore.delete(tx, userId, id)).changes === 0) throw notFound("Private key");
      await this.tags.removeEntity(tx, "privateKey", id);
    });
  }

  async export(userId: string, rawId: string | undefined, body: KeyExportInput): Promise<ExportedFile> {
    const fmt = format(body.format, KEY_EXPORT_FORMATS);
    const passphrase = optionalPassphrase(body.passphrase, "passphrase");
    const exportPassphrase = optionalPassphrase(body.exportPassphrase, "exportPassphrase");
    const row = await keysStore.getWithKey(this.rt.db, userId, pathId(rawId, "Private key"));
    if (!row) throw notFound("Private key");
    const pkcs8 = await this.unlock(row, passphrase);
    switch (fmt) {
      case "pem": {
        const pem =
          exportPassphrase === undefined
            ? derToPem(pkcs8, "PRIVATE KEY")
            : derToPem(await this.pkcs.encryptPkcs8(userId, pkcs8, exportPassphrase), "ENCRYPTED PRIVATE KEY");
        return exportedFile(fmt, row.name, "pem", MIME.pem, new TextEncoder().encode(pem));
      }
      case "pkcs8": {
        const der = exportPassphrase === undefined ? pkcs8 : await this.pkcs.encryptPkcs8(userId, pkcs8, exportPassphrase);
        return exportedFile(fmt, row.name, "p8", MIME.pkcs8, der);
      }
      case "pkcs12": {
        const pfx = await this.pkcs.buildPkcs12(userId, { pkcs8, friendlyName: row.name, passphrase: exportPassphrase ?? "" });
        return exportedFile(fmt, row.name, "pfx", MIME.pkcs12, pfx);
      }
    }
  }

  // ---- user data: export, import, clone (features/user-data). Writes take the import transaction's handle. ----

  /** Every key of the user with its stored PKCS#8 DER (EncryptedPrivateKeyInfo when `encrypted`), name ascending.
   *  A blob that cannot be unsealed (wrong master key, tampered row) is left out and logged. */
  async exportAll(userId: string): Promise<(Omit<PrivateKey, "tags" | "tagIds"> & { pkcs8: Uint8Array })[]> {
    const out: (Omit<PrivateKey, "tags" | "tagIds"> & { pkcs8: Uint8Array })[] = [];
    for (const row of await keysStore.allOfUser(this.rt.db, userId)) {
      try {
        out.push({ ...toPrivateKey(row), pkcs8: this.open(row) });
      } catch {
        this.rt.log.error("private keys: cannot unseal a stored key", { keyId: row.id });
      }
    }
    return out;
  }

  /** The rules for an imported key: name, alg, encrypted, and a DER that holds a key of that algorithm. */
  checkImport(
    raw: { name?: unknown; alg?: unknown; encrypted?: unknown },
    der: Uint8Array,
  ): { name: string; alg: KeyAlgorithm; encrypted: boolean; der: Uint8Array } {
    const name = normalizeName(raw.name, NAME_MAX, "name");
    const alg = parseKeyAlg(raw.alg, "alg");
    if (typeof raw.encrypted !== "boolean") throw invalid("encrypted: must be a boolean");
    const problem = pkcs8Problem(der, raw.encrypted, alg);
    if (problem) throw invalid(`pkcs8: ${problem}`);
    return { name, alg, encrypted: raw.encrypted, der };
  }

  importRefs = (db: Db, userId: string) => keysStore.refs(db, userId);
  importCount = (db: Db, userId: string) => keysStore.count(db, userId);

  private importRow(
    userId: string,
    id: string,
    k: { name: string; alg: KeyAlgorithm; encrypted: boolean; der: Uint8Array },
    createdAt: number,
    updatedAt: number,
  ): KeyRow {
    return {
      id,
      user_id: userId,
      name: k.name,
      alg: JSON.stringify(k.alg),
      encrypted: k.encrypted ? 1 : 0,
      key_enc: this.seal(id, k.der),
      created_at: createdAt,
      updated_at: updatedAt,
    };
  }

  async importInsert(
    tx: Db,
    userId: string,
    id: string,
    k: { name: string; alg: KeyAlgorithm; encrypted: boolean; der: Uint8Array },
    createdAt: number,
    updatedAt: number,
  ): Promise<void> {
    await keysStore.insert(tx, this.importRow(userId, id, k, createdAt, updatedAt));
  }

  async importReplace(
    tx: Db,
    userId: string,
    id: string,
    k: { name: string; alg: KeyAlgorithm; encrypted: boolean; der: Uint8Array },
    now: number,
  ): Promise<void> {
    await keysStore.replace(tx, this.importRow(userId, id, k, now, now));
  }

  async importDelete(tx: Db, userId: string, id: string): Promise<void> {
    if ((await keysStore.delete(tx, userId, id)).changes > 0) await this.tags.removeEntity(tx, "privateKey", id);
  }
}
