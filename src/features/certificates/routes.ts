// /api/certificates: private keys, certificate templates (generation, sharing) and the remote chain fetch
// (supplement §12, interface "Certificates"). Shared operations (template GET and _generate) are declared
// `auth: "shared"`: the share header or the owner's own credentials, never 401. The schemas are contract.ts's; bodies
// are read loosely (looseBody) and checked by the services.
import { Elysia } from "elysia";
import type { ErrorCode } from "../../platform/core/errors";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { CertificatesService } from "./service";
import { looseBody, op, Page, T } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import {
  CertificateTemplate,
  CertificateTemplateGetResponse,
  ExportedFile,
  PrivateKey,
  PrivateKeysCreateParams,
  PrivateKeysExportParams,
  PrivateKeysUpdateParams,
  TemplatesCreateParams,
  TemplatesFetchCertificatesParams,
  TemplatesGenerateParams,
  TemplateShare,
  TemplatesUpdateParams,
} from "./contract";

const now = 1767225600;
const TEMPLATE_EXAMPLE = {
  templateName: "localhost",
  attributes: {
    commonName: "localhost",
    keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
    signatureAlgorithm: "sha256",
    notValidBefore: now,
    notValidAfter: now + 365 * 86400,
    subjectAltNames: ["localhost", "127.0.0.1"],
  },
};

const tags = ["certificates"];
const SHARED =
  "Shared operation: works anonymously with the X-User-Share-ID header (alias X-Secbox-Share-ID) of a live share of this template; otherwise the owner's own credentials; 404 otherwise, never 401.";

/** Passphrase work runs on the work pool (tasks.ts): its queue may be full (429 for the user, 503 for all). */
const BUSY: { 429: ErrorCode[]; 503: ErrorCode[] } = { 429: ["RATE_LIMITED"], 503: ["UNAVAILABLE"] };

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
      body: looseBody(TemplatesFetchCertificatesParams),
      detail: op({
        tags,
        summary: "Fetch the TLS certificate chain of a remote HTTPS endpoint (PEM strings, leaf first, as the server sent them)",
        body: TemplatesFetchCertificatesParams,
        responses: { 200: T.Array(T.String({ description: "a PEM certificate" })) },
        errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"] },
        example: { url: "https://example.com" },
      }),
    })
    // ---- private keys ----
    .get("/api/certificates/private_keys", ({ user, query }) => certificates.keys.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      detail: op({
        tags,
        summary: "List private keys (common list query)",
        query: ListQueryParams,
        responses: { 200: Page("PrivateKey", PrivateKey) },
      }),
    })
    .post(
      "/api/certificates/private_keys",
      async ({ user, body, set }) => {
        const key = await certificates.keys.create(user, body);
        set.status = 201;
        return key;
      },
      {
        auth: "user",
        body: looseBody(PrivateKeysCreateParams),
        detail: op({
          tags,
          summary: "Generate a private key",
          body: PrivateKeysCreateParams,
          responses: { 201: PrivateKey },
          errors: { 400: ["ALGORITHM_UNAVAILABLE"], 409: ["DUPLICATE_NAME"], ...BUSY },
          example: { keyName: "web", alg: { keyType: "ecdsa", curve: "secp256r1" } },
        }),
      },
    )
    .get("/api/certificates/private_keys/:key_id", ({ user, params }) => certificates.keys.get(user.id, params.key_id), {
      auth: "user",
      detail: op({ tags, summary: "Get a private key's metadata (never key material)", responses: { 200: PrivateKey } }),
    })
    .put(
      "/api/certificates/private_keys/:key_id",
      async ({ user, params, body, set }) => {
        await certificates.keys.update(user.id, params.key_id, body);
        set.status = 204;
      },
      {
        auth: "user",
        body: looseBody(PrivateKeysUpdateParams),
        detail: op({
          tags,
          summary: "Rename, retag, or set/change/remove the passphrase of a private key",
          body: PrivateKeysUpdateParams,
          responses: { 204: null },
          errors: { 400: ["BAD_PASSPHRASE"], 409: ["DUPLICATE_NAME"], ...BUSY },
        }),
      },
    )
    .delete(
      "/api/certificates/private_keys/:key_id",
      async ({ user, params, set }) => {
        await certificates.keys.delete(user.id, params.key_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: "Delete a private key", responses: { 204: null } }) },
    )
    .post("/api/certificates/private_keys/:key_id/_export", ({ user, params, body }) => certificates.keys.export(user.id, params.key_id, body), {
      auth: "user",
      body: looseBody(PrivateKeysExportParams),
      detail: op({
        tags,
        summary: "Export a private key as PEM, PKCS#8 DER or PKCS#12",
        body: PrivateKeysExportParams,
        responses: { 200: ExportedFile },
        errors: { 400: ["BAD_PASSPHRASE"], ...BUSY },
        example: { format: "pem" },
      }),
    })
    // ---- certificate templates ----
    .get("/api/certificates/templates", ({ user, query }) => certificates.templates.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      detail: op({
        tags,
        summary: "List certificate templates (common list query)",
        query: ListQueryParams,
        responses: { 200: Page("CertificateTemplate", CertificateTemplate) },
      }),
    })
    .post(
      "/api/certificates/templates",
      async ({ user, body, set }) => {
        const template = await certificates.templates.create(user, body);
        set.status = 201;
        return template;
      },
      {
        auth: "user",
        body: looseBody(TemplatesCreateParams),
        detail: op({
          tags,
          summary: "Create a certificate template",
          body: TemplatesCreateParams,
          responses: { 201: CertificateTemplate },
          errors: { 400: ["ALGORITHM_UNAVAILABLE"], 409: ["DUPLICATE_NAME"] },
          example: TEMPLATE_EXAMPLE,
        }),
      },
    )
    .get(
      "/api/certificates/templates/:template_id",
      ({ request, principal, params }) => certificates.templates.get(request, principal, params.template_id),
      {
        auth: "shared",
        detail: op({
          tags,
          summary: "Get a certificate template and its share",
          description: SHARED,
          responses: { 200: CertificateTemplateGetResponse },
        }),
      },
    )
    .put(
      "/api/certificates/templates/:template_id",
      async ({ user, params, body, set }) => {
        await certificates.templates.update(user.id, params.template_id, body);
        set.status = 204;
      },
      {
        auth: "user",
        body: looseBody(TemplatesUpdateParams),
        detail: op({
          tags,
          summary: "Update a certificate template (attributes replace all)",
          body: TemplatesUpdateParams,
          responses: { 204: null },
          errors: { 400: ["ALGORITHM_UNAVAILABLE"], 409: ["DUPLICATE_NAME"] },
        }),
      },
    )
    .delete(
      "/api/certificates/templates/:template_id",
      async ({ user, params, set }) => {
        await certificates.templates.delete(user.id, params.template_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: "Delete a certificate template (and its share)", responses: { 204: null } }) },
    )
    .post(
      "/api/certificates/templates/:template_id/_generate",
      ({ request, principal, params, body }) => certificates.templates.generate(request, principal, params.template_id, body),
      {
        auth: "shared",
        body: looseBody(TemplatesGenerateParams),
        detail: op({
          tags,
          summary: "Generate a self-signed certificate and a fresh key pair",
          description: SHARED,
          body: TemplatesGenerateParams,
          responses: { 200: ExportedFile },
          errors: { 400: ["ALGORITHM_UNAVAILABLE"], ...BUSY },
          example: { format: "pem" },
        }),
      },
    )
    .post("/api/certificates/templates/:template_id/_share", ({ user, params }) => certificates.templates.share(user.id, params.template_id), {
      auth: "user",
      detail: op({ tags, summary: "Share a template (idempotent: returns the existing share)", responses: { 200: TemplateShare } }),
    })
    .post(
      "/api/certificates/templates/:template_id/_unshare",
      async ({ user, params, set }) => {
        await certificates.templates.unshare(user.id, params.template_id);
        set.status = 204;
      },
      {
        auth: "user",
        detail: op({
          tags,
          summary: "Stop sharing a template (204 also when not shared, and for an unknown, foreign or malformed id)",
          responses: { 204: null },
        }),
      },
    );
