// Certificate rules the web shares (supplement §12.1–§12.4), import-free: web/api/rules.gen.ts is generated from
// this module (`bun run gen:api`, scripts/gen/rules.ts). The API's checks (algorithms.ts, attributes.ts, files.ts,
// keys.ts, templates.ts) and the contract (contract.ts) import them from here, so a form offers exactly what the API
// takes.

/** Key algorithms (§12.1): key types, RSA and DSA sizes (bits, as strings), ECDSA curves. */
export const KEY_TYPES = ["rsa", "dsa", "ecdsa", "ed25519"] as const;
export const RSA_SIZES = ["1024", "2048", "4096", "8192"] as const;
export const DSA_SIZES = ["1024", "2048"] as const;
export const CURVES = ["secp256r1", "secp384r1", "secp521r1"] as const;

/** Signature algorithms (§12.3) and the key types each can sign with. */
export const SIGNATURE_ALGORITHMS = ["md5", "sha1", "sha256", "sha384", "sha512", "ed25519"] as const;
export const SIGNATURE_KEY_TYPES = {
  md5: ["rsa"],
  sha1: ["rsa", "dsa", "ecdsa"],
  sha256: ["rsa", "dsa", "ecdsa"],
  sha384: ["rsa", "ecdsa"],
  sha512: ["rsa", "ecdsa"],
  ed25519: ["ed25519"],
} as const;

/** Key usages and extended key usages a template may ask for (§12.3). */
export const KEY_USAGES = [
  "crlSigning",
  "dataEncipherment",
  "decipherOnly",
  "digitalSignature",
  "encipherOnly",
  "keyAgreement",
  "keyCertificateSigning",
  "keyEncipherment",
  "nonRepudiation",
] as const;
export const EXTENDED_KEY_USAGES = [
  "codeSigning",
  "emailProtection",
  "timeStamping",
  "tlsWebClientAuthentication",
  "tlsWebServerAuthentication",
] as const;

/** Subject fields besides the country, in the order they are checked and stored, with their maximum characters
 *  (code points). */
export const SUBJECT_MAX_CHARS = {
  commonName: 64,
  organization: 64,
  organizationalUnit: 64,
  locality: 128,
  stateOrProvince: 128,
} as const;
/** `country`: 2 ASCII letters (stored upper-case). */
export const COUNTRY_RE = /^[A-Za-z]{2}$/;

/** Subject alternative names: at most MAX_SANS; a DNS name (optional leading `*.`) is at most MAX_DNS_NAME
 *  characters of DNS_LABEL_RE labels; a URI (contains `://`) or an email (contains `@`) is printable ASCII. */
export const MAX_SANS = 100;
export const MAX_DNS_NAME = 253;
export const DNS_LABEL_RE = /^[A-Za-z0-9-]{1,63}$/;
export const ASCII_PRINTABLE_RE = /^[\x21-\x7e]+$/;

/** Validity bounds: 1950-01-01T00:00:00Z and 9999-12-31T23:59:59Z, unix seconds. */
export const MIN_TIME = Date.UTC(1950, 0, 1) / 1000;
export const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59) / 1000;

/** Characters of a private key's or a template's name, after trimming. */
export const NAME_MAX = 100;
/** Characters (code points) of a passphrase. */
export const MAX_PASSPHRASE = 1024;

/** Export formats of a private key (§12.2) and of `_generate` (§12.4). */
export const KEY_EXPORT_FORMATS = ["pem", "pkcs8", "pkcs12"] as const;
export const GENERATE_FORMATS = ["pem", "pkcs8", "pkcs12", "der"] as const;
