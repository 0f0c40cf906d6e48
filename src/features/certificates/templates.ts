// Certificate templates (supplement §12.3–§12.4, §12.6): CRUD, `_generate` with a fresh key pair per call in
// every format, and sharing through the platform share mechanism. `_generate`'s passphrase work (PKCS#8
// encryption, PKCS#12) runs on the work pool under the template owner's share (tasks.ts).
import type { Principal, AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import type { Shares, UserShare } from "../../platform/auth/share";
import { duplicateName, invalid, isUniqueViolation, notFound } from "../../platform/core/errors";
import { isUuid, newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { normalizeName, pathId } from "../../platform/core/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";
import { parseAttributes, sansOf } from "./attributes";
import { createCertificate } from "./certificate";
import type {
  CertificateTemplate,
  CertificateTemplateGetResponse,
  ExportedFile,
  GenerateInput,
  TemplateAttributes,
  TemplateCreateInput,
  TemplateShare,
  TemplateUpdateInput,
} from "./contract";
import { exportedFile, format, MIME, optionalPassphrase, zipTexts } from "./files";
import { generateKeyPair } from "./keygen";
import { derToPem, type OpenSsl } from "./openssl";
import type { PkcsRunner } from "./tasks";
import { GENERATE_FORMATS, NAME_MAX } from "./shared-rules";
import { templatesStore, toTemplate, type TemplateRow } from "./store";

const WHAT = "Certificate template";
const SHARE_TYPE = "certificateTemplate" as const;

const toShare = (s: UserShare): TemplateShare => ({
  id: s.id,
  resource: { type: SHARE_TYPE, templateId: s.resource.templateId! },
  createdAt: s.createdAt,
});

const present = (v: unknown) => v !== undefined && v !== null;

export class CertificateTemplates {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
    private readonly shares: Shares,
    private readonly openssl: OpenSsl,
    private readonly pkcs: PkcsRunner,
  ) {}

  private async toWire(rows: TemplateRow[]): Promise<CertificateTemplate[]> {
    return this.tags.decorate("certificateTemplate", rows.map(toTemplate));
  }

  private attributes(raw: unknown): TemplateAttributes {
    const attributes = parseAttributes(raw);
    if (attributes.keyAlgorithm.keyType === "dsa") this.openssl.require();
    return attributes;
  }

  /** §12.6 resolution for the shared operations; the row is the owner's. */
  private async resolve(request: Request, principal: Principal | undefined, rawId: string | undefined) {
    const access = await this.shares.resolve(request, principal, SHARE_TYPE, rawId ?? "", (id) => templatesStore.ownerOf(this.rt.db, id), WHAT);
    const row = await templatesStore.get(this.rt.db, access.ownerId, (rawId ?? "").toLowerCase());
    if (!row) throw notFound(WHAT);
    return { row, viaShare: access.viaShare };
  }

  async list(userId: string, rawQuery: Record<string, unknown>): Promise<{ items: CertificateTemplate[]; total: number }> {
    const { rows, total } = await templatesStore.list(this.rt.db, userId, parseListQuery(rawQuery));
    return { items: await this.toWire(rows), total };
  }

  /** Shared operation: the owner sees tags; anyone else (through the share) sees `tags: []` and the share. */
  async get(request: Request, principal: Principal | undefined, rawId: string | undefined): Promise<CertificateTemplateGetResponse> {
    const { row, viaShare } = await this.resolve(request, principal, rawId);
    const template = viaShare ? { ...toTemplate(row), tags: [], tagIds: [] } : (await this.toWire([row]))[0]!;
    const userShare = await this.shares.forResource(SHARE_TYPE, row.id);
    return userShare ? { template, userShare: toShare(userShare) } : { template };
  }

  async create(user: AuthUser, body: TemplateCreateInput): Promise<CertificateTemplate> {
    if (!present(body.templateName)) throw invalid("templateName: is required");
    const name = normalizeName(body.templateName, NAME_MAX, "templateName");
    if (!present(body.attributes)) throw invalid("attributes: is required");
    const attributes = this.attributes(body.attributes);
    const tagIds = present(body.tagIds) ? await this.tags.resolveTagIds(user.id, body.tagIds) : [];
    const now = nowSec(this.rt.clock);
    const row: TemplateRow = { id: newId(), user_id: user.id, name, attributes: JSON.stringify(attributes), created_at: now, updated_at: now };
    try {
      await this.rt.db.tx(async (tx) => {
        if (await templatesStore.existsByName(tx, user.id, name)) throw duplicateName(WHAT, name);
        await templatesStore.insert(tx, row);
        await this.tags.setEntityTags(tx, "certificateTemplate", row.id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(WHAT, name);
      throw err;
    }
    return (await this.toWire([row]))[0]!;
  }

  async update(userId: string, rawId: string | undefined, body: TemplateUpdateInput): Promise<void> {
    const hasName = present(body.templateName);
    const hasAttributes = present(body.attributes);
    const hasTags = present(body.tagIds);
    if (!hasName && !hasAttributes && !hasTags) throw invalid("templateName, attributes, tagIds: at least one is required");
    const name = hasName ? normalizeName(body.templateName, NAME_MAX, "templateName") : undefined;
    const attributes = hasAttributes ? this.attributes(body.attributes) : undefined;
    const id = pathId(rawId, WHAT);
    const current = await templatesStore.get(this.rt.db, userId, id);
    if (!current) throw notFound(WHAT);
    const tagIds = hasTags ? await this.tags.resolveTagIds(userId, body.tagIds) : undefined;
    const next = {
      name: name ?? current.name,
      attributes: attributes ? JSON.stringify(attributes) : current.attributes,
      updatedAt: nowSec(this.rt.clock),
    };
    try {
      await this.rt.db.tx(async (tx) => {
        if (next.name !== current.name && (await templatesStore.existsByName(tx, userId, next.name, id))) throw duplicateName(WHAT, next.name);
        if ((await templatesStore.update(tx, userId, id, next)).changes === 0) throw notFound(WHAT);
        if (tagIds !== undefined) await this.tags.setEntityTags(tx, "certificateTemplate", id, userId, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(WHAT, next.name);
      throw err;
    }
  }

  /** Deletes the template, its tag links and its share. */
  async delete(userId: string, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, WHAT);
    await this.rt.db.tx(async (tx) => {
      if ((await templatesStore.delete(tx, userId, id)).changes === 0) throw notFound(WHAT);
      await this.tags.removeEntity(tx, "certificateTemplate", id);
      await this.shares.remove(tx, SHARE_TYPE, id);
    });
  }

  async share(userId: string, rawId: string | undefined): Promise<TemplateShare> {
    const id = pathId(rawId, WHAT);
    if (!(await templatesStore.get(this.rt.db, userId, id))) throw notFound(WHAT);
    return toShare(await this.shares.share(userId, SHARE_TYPE, id));
  }

  /** 204 in every case (§12.3); only the owner's own share is ever removed. */
  async unshare(userId: string, rawId: string | undefined): Promise<void> {
    if (!isUuid(rawId)) return;
    const id = rawId.toLowerCase();
    if ((await templatesStore.ownerOf(this.rt.db, id)) !== userId) return;
    await this.shares.unshare(SHARE_TYPE, id);
  }

  /** Shared operation: a self-signed certificate and a fresh key pair, in the requested format (§12.4). */
  async generate(request: Request, principal: Principal | undefined, rawId: string | undefined, body: GenerateInput): Promise<ExportedFile> {
    const fmt = format(body.format, GENERATE_FORMATS);
    const passphrase = optionalPassphrase(body.passphrase, "passphrase");
    const { row } = await this.resolve(request, principal, rawId);
    const attributes = toTemplate(row).attributes;
    if (attributes.keyAlgorithm.keyType === "dsa") this.openssl.require();
    const keys = await generateKeyPair(attributes.keyAlgorithm, this.openssl);
    const certificate = await createCertificate({ attributes, sans: sansOf(attributes), keys, openssl: this.openssl });
    // the owner's share pays (also when the caller comes through a share)
    const owner = row.user_id;
    const keyDer = () => (passphrase === undefined ? Promise.resolve(keys.pkcs8) : this.pkcs.encryptPkcs8(owner, keys.pkcs8, passphrase));
    switch (fmt) {
      case "pem": {
        const key = await keyDer();
        const zip = zipTexts({
          "certificate.crt": derToPem(certificate, "CERTIFICATE"),
          "private_key.key": derToPem(key, passphrase === undefined ? "PRIVATE KEY" : "ENCRYPTED PRIVATE KEY"),
        });
        return exportedFile(fmt, row.name, "zip", MIME.zip, zip);
      }
      case "pkcs8":
        return exportedFile(fmt, row.name, "p8", MIME.pkcs8, await keyDer());
      case "pkcs12":
        return exportedFile(
          fmt,
          row.name,
          "pfx",
          MIME.pkcs12,
          await this.pkcs.buildPkcs12(owner, { pkcs8: keys.pkcs8, certificate, friendlyName: row.name, passphrase: passphrase ?? "" }),
        );
      case "der":
        return exportedFile(fmt, row.name, "der", MIME.der, certificate);
    }
  }

  // ---- user data: export, import, clone (features/user-data). Writes take the import transaction's handle. ----

  /** Every template of the user, name ascending (tags not included). */
  async exportAll(userId: string): Promise<Omit<CertificateTemplate, "tags" | "tagIds">[]> {
    return (await templatesStore.allOfUser(this.rt.db, userId)).map(toTemplate);
  }

  /** The create rules for an imported template. DSA templates are accepted without `openssl` (only _generate needs
   *  it), so a file from a server that had it still imports. */
  checkImport(raw: { name?: unknown; attributes?: unknown }): { name: string; attributes: TemplateAttributes } {
    return { name: normalizeName(raw.name, NAME_MAX, "name"), attributes: parseAttributes(raw.attributes) };
  }

  importRefs = (db: Db, userId: string) => templatesStore.refs(db, userId);
  importCount = (db: Db, userId: string) => templatesStore.count(db, userId);

  async importInsert(
    tx: Db,
    userId: string,
    id: string,
    t: { name: string; attributes: TemplateAttributes },
    createdAt: number,
    updatedAt: number,
  ): Promise<void> {
    await templatesStore.insert(tx, {
      id,
      user_id: userId,
      name: t.name,
      attributes: JSON.stringify(t.attributes),
      created_at: createdAt,
      updated_at: updatedAt,
    });
  }

  async importReplace(tx: Db, userId: string, id: string, t: { name: string; attributes: TemplateAttributes }, now: number): Promise<void> {
    await templatesStore.update(tx, userId, id, { name: t.name, attributes: JSON.stringify(t.attributes), updatedAt: now });
  }

  /** Deletes the template, its tag links and its share. */
  async importDelete(tx: Db, userId: string, id: string): Promise<void> {
    if ((await templatesStore.delete(tx, userId, id)).changes === 0) return;
    await this.tags.removeEntity(tx, "certificateTemplate", id);
    await this.shares.remove(tx, SHARE_TYPE, id);
  }
}
