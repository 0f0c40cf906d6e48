// /api/certificates: private keys, certificate templates (generation, sharing) and the remote chain fetch
// (supplement §12, interface "Certificates"). Shared operations (template GET and _generate) are declared
// `auth: "shared"`: the share header or the owner's own credentials, never 401.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { CertificatesService } from "./service";
import { ListQuerySchema } from "../../platform/http/list-query";

const TagRefSchema = t.Object({ id: t.String({ format: "uuid" }), name: t.String(), color: t.String() });
const AlgSchema = t.Object(
  {
    keyType: t.String({ description: "rsa, dsa, ecdsa or ed25519" }),
    keySize: t.Optional(t.String({ description: 'rsa: "1024" | "2048" | "4096" | "8192"; dsa: "1024" | "2048"' })),
    curve: t.Optional(t.String({ description: "ecdsa: secp256r1, secp384r1 or secp521r1" })),
  },
  { description: "Key algorithm (supplement §12.1)" },
);
const PrivateKeySchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  alg: AlgSchema,
  encrypted: t.Boolean({ description: "true when the key is protected by a passphrase" }),
  tags: t.Array(TagRefSchema),
  tagIds: t.Array(t.String({ format: "uuid" })),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});
const AttributesSchema = t.Object(
  {
    // Limits in characters (code points), checked by the service: TypeBox's maxLength would count UTF-16 units.
    commonName: t.Optional(t.String({ description: "at most 64 characters" })),
    country: t.Optional(t.String({ description: "2 letters, upper-case" })),
    stateOrProvince: t.Optional(t.String({ description: "at most 128 characters" })),
    locality: t.Optional(t.String({ description: "at most 128 characters" })),
    organization: t.Optional(t.String({ description: "at most 64 characters" })),
    organizationalUnit: t.Optional(t.String({ description: "at most 64 characters" })),
    keyAlgorithm: AlgSchema,
    signatureAlgorithm: t.String({ description: "md5 (RSA), sha1/sha256 (RSA, DSA, ECDSA), sha384/sha512 (RSA, ECDSA), ed25519 (Ed25519)" }),
    notValidBefore: t.Integer({ description: "unix seconds" }),
    notValidAfter: t.Integer({ description: "unix seconds, after notValidBefore" }),
    version: t.Integer({ description: "1, 2 or 3" }),
    isCa: t.Boolean(),
    keyUsage: t.Optional(t.Array(t.String())),
    extendedKeyUsage: t.Optional(t.Array(t.String())),
    subjectAltNames: t.Optional(t.Array(t.String(), { description: "IP, URI (contains ://), email (contains @) or DNS name; at most 100" })),
  },
  { description: "Certificate template attributes (supplement §12.3)" },
);
const TemplateSchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  attributes: AttributesSchema,
  tags: t.Array(TagRefSchema),
  tagIds: t.Array(t.String({ format: "uuid" })),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});
const UserShareSchema = t.Object({
  id: t.String({ format: "uuid", description: "share id (UUID v4): send it as X-User-Share-ID" }),
  resource: t.Object({ type: t.Literal("certificateTemplate"), templateId: t.String({ format: "uuid" }) }),
  createdAt: t.Integer(),
});
const ExportedFileSchema = t.Object({
  format: t.String(),
  fileName: t.String(),
  mimeType: t.String(),
  data: t.String({ description: "file content, base64" }),
});

// Loose request types: the service produces the spec's messages and codes.
const u = (description: string) => t.Optional(t.Unknown({ description }));
const KeyCreateBody = t.Object({
  keyName: u("1..100 characters, unique"),
  alg: u('{"keyType":"rsa","keySize":"2048"} | {"keyType":"ecdsa","curve":"secp256r1"} | {"keyType":"dsa","keySize":"2048"} | {"keyType":"ed25519"}'),
  passphrase: u("optional, 1..1024 characters: the key is stored as encrypted PKCS#8"),
  tagIds: u("ids of the caller's tags"),
});
const KeyUpdateBody = t.Object({
  keyName: u("new name"),
  passphrase: u("the current passphrase (needed to change the protection of an encrypted key)"),
  newPassphrase: u("string = set or change the passphrase, null = remove it"),
  tagIds: u("replaces the tags when present"),
});
const KeyExportBody = t.Object({
  format: u("pem | pkcs8 | pkcs12"),
  passphrase: u("unlocks an encrypted key"),
  exportPassphrase: u("protects the exported file"),
});
const TemplateCreateBody = t.Object({
  templateName: u("1..100 characters, unique"),
  attributes: u("supplement §12.3"),
  tagIds: u("ids of the caller's tags"),
});
const TemplateUpdateBody = t.Object({
  templateName: u("new name"),
  attributes: u("replaces all attributes"),
  tagIds: u("replaces the tags when present"),
});
const GenerateBody = t.Object({
  format: u("pem (ZIP with certificate.crt and private_key.key) | pkcs8 | pkcs12 | der"),
  passphrase: u("protects the key (pem, pkcs8) or the PFX (pkcs12); ignored for der"),
});
const FetchBody = t.Object({ url: u("https URL") });

const detail = (summary: string, description?: string) => ({ tags: ["certificates"], summary, ...(description ? { description } : {}) });
const SHARED = "Shared operation: works anonymously with the X-User-Share-ID header (alias X-Secbox-Share-ID) of a live share; 404 otherwise, never 401.";

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface CertificatesRoutesDeps {
  auth: AuthPlugin;
  certificates: CertificatesService;
}

export const certificatesRoutes = ({ auth, certificates }: CertificatesRoutesDeps) =>
  new Elysia({ name: "feature/certificates" })
    .use(auth)
    .post("/api/certificates/_fetch", ({ body }) => certificates.fetchChain(body), {
      auth: "user",
      body: FetchBody,
      response: t.Array(t.String()),
      detail: detail("Fetch the TLS certificate chain of a remote HTTPS endpoint", "PEM strings, leaf first, in the order the server sent them."),
    })
    // ---- private keys ----
    .get("/api/certificates/private_keys", ({ user, query }) => certificates.keys.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: t.Object({ items: t.Array(PrivateKeySchema), total: t.Integer() }),
      detail: detail("List private keys (common list query)"),
    })
    .post(
      "/api/certificates/private_keys",
      async ({ user, body, set }) => {
        const key = await certificates.keys.create(user, body);
        set.status = 201;
        return key;
      },
      { auth: "user", body: KeyCreateBody, response: { 201: PrivateKeySchema }, detail: detail("Generate a private key") },
    )
    .get("/api/certificates/private_keys/:key_id", ({ user, params }) => certificates.keys.get(user.id, params.key_id), {
      auth: "user",
      response: PrivateKeySchema,
      detail: detail("Get a private key's metadata"),
    })
    .put(
      "/api/certificates/private_keys/:key_id",
      async ({ user, params, body, set }) => {
        await certificates.keys.update(user.id, params.key_id, body);
        set.status = 204;
      },
      { auth: "user", body: KeyUpdateBody, detail: detail("Rename, retag, or set/change/remove the passphrase of a private key") },
    )
    .delete(
      "/api/certificates/private_keys/:key_id",
      async ({ user, params, set }) => {
        await certificates.keys.delete(user.id, params.key_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete a private key") },
    )
    .post("/api/certificates/private_keys/:key_id/_export", ({ user, params, body }) => certificates.keys.export(user.id, params.key_id, body), {
      auth: "user",
      body: KeyExportBody,
      response: ExportedFileSchema,
      detail: detail("Export a private key as PEM, PKCS#8 DER or PKCS#12"),
    })
    // ---- certificate templates ----
    .get("/api/certificates/templates", ({ user, query }) => certificates.templates.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: t.Object({ items: t.Array(TemplateSchema), total: t.Integer() }),
      detail: detail("List certificate templates (common list query)"),
    })
    .post(
      "/api/certificates/templates",
      async ({ user, body, set }) => {
        const template = await certificates.templates.create(user, body);
        set.status = 201;
        return template;
      },
      { auth: "user", body: TemplateCreateBody, response: { 201: TemplateSchema }, detail: detail("Create a certificate template") },
    )
    .get(
      "/api/certificates/templates/:template_id",
      ({ request, principal, params }) => certificates.templates.get(request, principal, params.template_id),
      {
        auth: "shared",
        response: t.Object({ template: TemplateSchema, userShare: t.Optional(UserShareSchema) }),
        detail: detail("Get a certificate template and its share", SHARED),
      },
    )
    .put(
      "/api/certificates/templates/:template_id",
      async ({ user, params, body, set }) => {
        await certificates.templates.update(user.id, params.template_id, body);
        set.status = 204;
      },
      { auth: "user", body: TemplateUpdateBody, detail: detail("Update a certificate template (attributes replace all)") },
    )
    .delete(
      "/api/certificates/templates/:template_id",
      async ({ user, params, set }) => {
        await certificates.templates.delete(user.id, params.template_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete a certificate template (and its share)") },
    )
    .post(
      "/api/certificates/templates/:template_id/_generate",
      ({ request, principal, params, body }) => certificates.templates.generate(request, principal, params.template_id, body),
      {
        auth: "shared",
        body: GenerateBody,
        response: ExportedFileSchema,
        detail: detail("Generate a self-signed certificate and a fresh key pair", SHARED),
      },
    )
    .post("/api/certificates/templates/:template_id/_share", ({ user, params }) => certificates.templates.share(user.id, params.template_id), {
      auth: "user",
      response: UserShareSchema,
      detail: detail("Share a template (idempotent)"),
    })
    .post(
      "/api/certificates/templates/:template_id/_unshare",
      async ({ user, params, set }) => {
        await certificates.templates.unshare(user.id, params.template_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Stop sharing a template (204 also when not shared)") },
    );
