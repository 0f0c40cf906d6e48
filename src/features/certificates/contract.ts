// The certificates contract (supplement §12, interface "Certificates"): the one declaration of each wire shape and
// request body — private keys, certificate templates and their attributes, shares, exported files, the chain fetch —
// as TypeBox schemas (routes.ts documents the routes with them; the web's types are generated from that document)
// and, beside each, its TypeScript type (`Static`). Requests are read loosely (looseBody) and checked by the
// services (keys.ts, templates.ts, attributes.ts, algorithms.ts, files.ts) with the messages of supplement §2; the
// values here come from shared-rules.ts, which the web gets too.
// Owns: declarations only. Must never: hold a rule's value (shared-rules.ts does) or import a service.
import type { TSchema } from "@sinclair/typebox";
import { Named, Nullable, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import {
  CURVES,
  DSA_SIZES,
  EXTENDED_KEY_USAGES,
  GENERATE_FORMATS,
  KEY_EXPORT_FORMATS,
  KEY_USAGES,
  MAX_PASSPHRASE,
  MAX_SANS,
  RSA_SIZES,
  SIGNATURE_ALGORITHMS,
  SUBJECT_MAX_CHARS,
} from "./shared-rules";

export const KeyAlgorithm = Named(
  "KeyAlgorithm",
  T.Union(
    [
      T.Object({ keyType: StringEnum(["rsa"]), keySize: StringEnum(RSA_SIZES) }),
      T.Object({
        keyType: StringEnum(["dsa"]),
        keySize: StringEnum(DSA_SIZES, { description: "needs an openssl program (else 400 ALGORITHM_UNAVAILABLE)" }),
      }),
      T.Object({ keyType: StringEnum(["ecdsa"]), curve: StringEnum(CURVES) }),
      T.Object({ keyType: StringEnum(["ed25519"]) }),
    ],
    { description: "key algorithm (supplement §12.1)" },
  ),
);
export type KeyAlgorithm = Static<typeof KeyAlgorithm>;
export type KeyType = KeyAlgorithm["keyType"];

export const PrivateKey = Named(
  "PrivateKey",
  T.Object({
    id: Uuid(),
    name: T.String(),
    alg: KeyAlgorithm,
    encrypted: T.Boolean({ description: "true when the key is protected by a passphrase" }),
    ...TaggedMembers,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
/** `PrivateKey`: never key material. */
export type PrivateKey = Static<typeof PrivateKey>;

const Subject = (max: number) => T.Optional(T.String({ description: `at most ${max} characters; empty = absent` }));
export const CertificateAttributes = Named(
  "CertificateAttributes",
  T.Object(
    {
      commonName: Subject(SUBJECT_MAX_CHARS.commonName),
      country: T.Optional(T.String({ pattern: "^([A-Za-z]{2})?$", description: "2 ASCII letters, stored upper-case" })),
      stateOrProvince: Subject(SUBJECT_MAX_CHARS.stateOrProvince),
      locality: Subject(SUBJECT_MAX_CHARS.locality),
      organization: Subject(SUBJECT_MAX_CHARS.organization),
      organizationalUnit: Subject(SUBJECT_MAX_CHARS.organizationalUnit),
      keyAlgorithm: KeyAlgorithm,
      signatureAlgorithm: StringEnum(SIGNATURE_ALGORITHMS, {
        description: "md5 (RSA), sha1/sha256 (RSA, DSA, ECDSA), sha384/sha512 (RSA, ECDSA), ed25519 (Ed25519 only, and Ed25519 keys need it)",
      }),
      notValidBefore: T.Integer({ description: "unix seconds, within the years 1950..9999" }),
      notValidAfter: T.Integer({ description: "unix seconds, after notValidBefore, within the years 1950..9999" }),
      version: T.Optional(
        T.Integer({
          minimum: 1,
          maximum: 3,
          description: "1, 2 or 3 (default 3); below 3 allows no isCa, keyUsage, extendedKeyUsage or subjectAltNames",
        }),
      ),
      isCa: T.Optional(T.Boolean({ description: "default false" })),
      keyUsage: T.Optional(T.Array(StringEnum(KEY_USAGES))),
      extendedKeyUsage: T.Optional(T.Array(StringEnum(EXTENDED_KEY_USAGES))),
      subjectAltNames: T.Optional(
        T.Array(T.String(), {
          maxItems: MAX_SANS,
          description: "IP literal, URI (contains ://), email (contains @) or DNS name (optional leading *.)",
        }),
      ),
    },
    { description: "certificate attributes (supplement §12.3): at least one subject field or subject alternative name" },
  ),
);
export type CertificateAttributes = Static<typeof CertificateAttributes>;
export type SignatureAlgorithm = CertificateAttributes["signatureAlgorithm"];
/** Attributes as stored and answered (attributes.ts parseAttributes): `version` and `isCa` always set. */
export type TemplateAttributes = CertificateAttributes & { version: 1 | 2 | 3; isCa: boolean };

export const CertificateTemplate = Named(
  "CertificateTemplate",
  T.Object({ id: Uuid(), name: T.String(), attributes: CertificateAttributes, ...TaggedMembers, createdAt: UnixTime(), updatedAt: UnixTime() }),
);
export type CertificateTemplate = Static<typeof CertificateTemplate>;

const ShareId = Uuid({ description: "share id (UUID v4): send it as X-User-Share-ID" });
export const TemplateShare = Named(
  "CertificateTemplateShare",
  T.Object({ id: ShareId, resource: T.Object({ type: StringEnum(["certificateTemplate"]), templateId: Uuid() }), createdAt: UnixTime() }),
);
/** `UserShare` of a template (§12.6). */
export type TemplateShare = Static<typeof TemplateShare>;

export const CertificateTemplateGetResponse = Named(
  "CertificateTemplateGetResponse",
  T.Object(
    {
      template: CertificateTemplate,
      userShare: T.Optional(TemplateShare),
    },
    { description: "to anyone but the owner: tags and tagIds are [] and userShare is included" },
  ),
);
export type CertificateTemplateGetResponse = Static<typeof CertificateTemplateGetResponse>;

export const ExportedFile = Named(
  "ExportedFile",
  T.Object({
    format: T.String({ description: "the requested format" }),
    fileName: T.String({ description: "the entity name with characters outside [A-Za-z0-9._-] replaced by _, plus the format's extension" }),
    mimeType: T.String(),
    data: T.String({ contentEncoding: "base64", description: "file content, base64" }),
  }),
);
/** `ExportedFile` (§12.2, §12.4): base64 data with a file name and MIME type. */
export type ExportedFile = Static<typeof ExportedFile>;

// ---- request bodies (read loosely; the services check every member) ----

/** A body as it reaches a service (looseBody: every member as sent). */
type Loose<S extends TSchema> = { [K in keyof Static<S>]?: unknown };

const Passphrase = (description: string) => Opt(T.String({ minLength: 1, maxLength: MAX_PASSPHRASE, description }));
const KeyName = T.String({ minLength: 1, description: "1..100 characters after trimming, unique per user" });
export const PrivateKeysCreateParams = Named(
  "PrivateKeysCreateParams",
  T.Object({ keyName: KeyName, alg: KeyAlgorithm, passphrase: Passphrase("the key is stored as encrypted PKCS#8"), tagIds: TagIdsParam }),
);
export type KeyCreateInput = Loose<typeof PrivateKeysCreateParams>;
export const PrivateKeysUpdateParams = Named(
  "PrivateKeysUpdateParams",
  T.Object(
    {
      keyName: Opt(KeyName),
      passphrase: Passphrase("the current passphrase: needed to change the protection of an encrypted key"),
      newPassphrase: T.Optional(
        Nullable(T.String({ minLength: 1, maxLength: MAX_PASSPHRASE }), { description: "a string sets or changes the passphrase, null removes it" }),
      ),
      tagIds: TagIdsParam,
    },
    { description: "something to change", minProperties: 1 },
  ),
);
export type KeyUpdateInput = Loose<typeof PrivateKeysUpdateParams>;
export const PrivateKeysExportParams = Named(
  "PrivateKeysExportParams",
  T.Object({
    format: StringEnum(KEY_EXPORT_FORMATS, { description: "pem (PKCS#8 PEM), pkcs8 (DER) or pkcs12 (PFX)" }),
    passphrase: Passphrase("unlocks an encrypted key (ignored for an unencrypted one)"),
    exportPassphrase: Passphrase("protects the exported file"),
  }),
);
export type KeyExportInput = Loose<typeof PrivateKeysExportParams>;

const TemplateName = T.String({ minLength: 1, description: "1..100 characters after trimming, unique per user" });
export const TemplatesCreateParams = Named(
  "TemplatesCreateParams",
  T.Object({ templateName: TemplateName, attributes: CertificateAttributes, tagIds: TagIdsParam }),
);
export type TemplateCreateInput = Loose<typeof TemplatesCreateParams>;
export const TemplatesUpdateParams = Named(
  "TemplatesUpdateParams",
  T.Object(
    { templateName: Opt(TemplateName), attributes: Opt(CertificateAttributes), tagIds: TagIdsParam },
    { description: "at least one member; attributes replace all", minProperties: 1 },
  ),
);
export type TemplateUpdateInput = Loose<typeof TemplatesUpdateParams>;
export const TemplatesGenerateParams = Named(
  "TemplatesGenerateParams",
  T.Object({
    format: StringEnum(GENERATE_FORMATS, { description: "pem (ZIP with certificate.crt and private_key.key), pkcs8, pkcs12 or der" }),
    passphrase: Passphrase("protects the key (pem, pkcs8) or the PFX (pkcs12); ignored for der"),
  }),
);
export type GenerateInput = Loose<typeof TemplatesGenerateParams>;
export const TemplatesFetchCertificatesParams = Named(
  "TemplatesFetchCertificatesParams",
  T.Object({ url: T.String({ format: "uri", description: "an https URL; port 443 unless given" }) }),
);
export type FetchChainInput = Loose<typeof TemplatesFetchCertificatesParams>;
