// The certificate template form's model (supplement §12.3): form values ↔ API attributes, the rules the API applies
// (checked here first so mistakes show under their field), SAN type detection, validity presets and the plain-language
// hints of key usages. The API stays the authority: what it refuses is shown under the field it names.
import { certificates as certRules } from "../../api/rules.gen";
import type { CertificateTemplate, ExtendedKeyUsage, KeyUsage, TemplateAttributes } from "../../api/types";
import { fittingSignature, keyAlgorithm, keyParam } from "./algorithms";

const { ASCII_PRINTABLE_RE, COUNTRY_RE, DNS_LABEL_RE, MAX_DNS_NAME, NAME_MAX, SUBJECT_MAX_CHARS } = certRules;
export const { MAX_SANS, MIN_TIME, MAX_TIME } = certRules;

/** The subject fields besides the country, with the API's maximum lengths. */
export const SUBJECT_FIELDS = [
  { key: "commonName", label: "Common name (CN)", max: SUBJECT_MAX_CHARS.commonName, placeholder: "example.com" },
  { key: "organization", label: "Organization (O)", max: SUBJECT_MAX_CHARS.organization, placeholder: "Example Ltd" },
  { key: "organizationalUnit", label: "Organizational unit (OU)", max: SUBJECT_MAX_CHARS.organizationalUnit, placeholder: "Platform" },
  { key: "locality", label: "Locality (L)", max: SUBJECT_MAX_CHARS.locality, placeholder: "Berlin" },
  { key: "stateOrProvince", label: "State or province (ST)", max: SUBJECT_MAX_CHARS.stateOrProvince, placeholder: "Berlin" },
] as const satisfies readonly { key: keyof typeof SUBJECT_MAX_CHARS; label: string; max: number; placeholder: string }[];
export type SubjectKey = (typeof SUBJECT_FIELDS)[number]["key"];

export const KEY_USAGES: { value: KeyUsage; label: string; hint: string }[] = [
  { value: "digitalSignature", label: "Digital signature", hint: "Signs data and TLS handshakes; most certificates need it" },
  { value: "keyEncipherment", label: "Key encipherment", hint: "Encrypts keys: RSA key exchange in older TLS" },
  { value: "keyAgreement", label: "Key agreement", hint: "Agrees on a shared key (ECDH)" },
  { value: "dataEncipherment", label: "Data encipherment", hint: "Encrypts data directly with the public key (rare)" },
  { value: "nonRepudiation", label: "Non-repudiation", hint: "Signatures the signer cannot later deny (content commitment)" },
  { value: "keyCertificateSigning", label: "Certificate signing", hint: "Signs other certificates: for CAs" },
  { value: "crlSigning", label: "CRL signing", hint: "Signs certificate revocation lists: for CAs" },
  { value: "encipherOnly", label: "Encipher only", hint: "With key agreement: the key may only encrypt" },
  { value: "decipherOnly", label: "Decipher only", hint: "With key agreement: the key may only decrypt" },
];

export const EXTENDED_KEY_USAGES: { value: ExtendedKeyUsage; label: string; hint: string }[] = [
  { value: "tlsWebServerAuthentication", label: "TLS server", hint: "HTTPS and other TLS servers" },
  { value: "tlsWebClientAuthentication", label: "TLS client", hint: "Clients in mutual TLS" },
  { value: "codeSigning", label: "Code signing", hint: "Signs programs and packages" },
  { value: "emailProtection", label: "Email protection", hint: "S/MIME signed or encrypted email" },
  { value: "timeStamping", label: "Time stamping", hint: "Trusted time-stamp authorities" },
];

export const usageLabel = (v: string) => [...KEY_USAGES, ...EXTENDED_KEY_USAGES].find((u) => u.value === v)?.label ?? v;

// ---- subject alternative names ------------------------------------------------------------------------------------

export type SanKind = "DNS" | "Wildcard" | "IP" | "Email" | "URI";

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isIpv6(v: string): boolean {
  if (!v.includes(":") || !/^[0-9A-Fa-f:.]+$/.test(v)) return false;
  try {
    return new URL(`http://[${v}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}

/** The kind of a SAN as the API classifies it (§12.3), or an error message for a value it would refuse. */
export function classifySan(raw: string): { kind: SanKind } | { error: string } {
  const v = raw.trim();
  if (v === "") return { error: "Empty name" };
  if (IPV4.test(v) || isIpv6(v)) return { kind: "IP" };
  if (v.includes("://")) return ASCII_PRINTABLE_RE.test(v) ? { kind: "URI" } : { error: "A URI must be printable ASCII without spaces" };
  if (v.includes("@")) {
    const at = v.lastIndexOf("@");
    return ASCII_PRINTABLE_RE.test(v) && at > 0 && at < v.length - 1 ? { kind: "Email" } : { error: "Not a valid email address" };
  }
  const name = v.startsWith("*.") ? v.slice(2) : v;
  if (v.length <= MAX_DNS_NAME && name.split(".").every((l) => DNS_LABEL_RE.test(l))) return { kind: v.startsWith("*.") ? "Wildcard" : "DNS" };
  return { error: "Not an IP address, a URI, an email address or a DNS name (letters, digits and - between dots, optionally *. first)" };
}

/** Pasted text → names (split at commas, whitespace and newlines). */
export const splitSans = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Typed or pasted text added to the list: every valid name is taken (duplicates once), every invalid one is left
 * out with its reason, so one bad entry never blocks the rest. `left` is the text that stays in the box (the
 * refused entries, or everything when the list would grow beyond MAX_SANS).
 */
export function takeSans(
  current: string[],
  text: string,
): { next: string[]; refused: { name: string; error: string }[]; left: string; problem: string | null } {
  const names = splitSans(text);
  const next = [...current];
  const refused: { name: string; error: string }[] = [];
  for (const name of names) {
    const c = classifySan(name);
    if ("error" in c) refused.push({ name, error: c.error });
    else if (!next.includes(name)) next.push(name);
  }
  if (next.length > MAX_SANS) return { next: current, refused, left: text, problem: `At most ${MAX_SANS} names` };
  const left = refused.map((r) => r.name).join(", ");
  const problem =
    refused.length === 0
      ? null
      : refused.length === 1
        ? `Not added: ${refused[0]!.name}: ${refused[0]!.error}`
        : `Not added: ${refused.map((r) => r.name).join(", ")} (${refused[0]!.error})`;
  return { next, refused, left, problem };
}

/** The TLS-server template without any SAN: browsers ignore the common name and refuse such a certificate. */
export const tlsServerWithoutSan = (v: Pick<TemplateFormValues, "version" | "extendedKeyUsage" | "subjectAltNames" | "sanDraft">) =>
  v.version === "3" &&
  v.extendedKeyUsage.includes("tlsWebServerAuthentication") &&
  v.subjectAltNames.length === 0 &&
  splitSans(v.sanDraft).every((n) => "error" in classifySan(n));

// ---- validity -----------------------------------------------------------------------------------------------------

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Unix seconds → the value of an `<input type="datetime-local" step="1">` (local time). */
export function toLocalInput(sec: number): string {
  const d = new Date(sec * 1000);
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The input's local time → unix seconds; NaN when empty or malformed. */
export function fromLocalInput(value: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return Number.NaN;
  return Math.floor(new Date(value).getTime() / 1000);
}

const DAY = 86_400;

export const VALIDITY_PRESETS: { label: string; days: number }[] = [
  { label: "30 days", days: 30 },
  { label: "1 year", days: 365 },
  { label: "2 years", days: 730 },
];

export const nowSec = () => Math.floor(Date.now() / 1000);

/** "for 365 days" / "expired 3 days ago" style description of a validity period. */
export function describeValidity(before: number, after: number, now = nowSec()): string {
  const days = Math.round((after - before) / DAY);
  const length =
    days >= 365 && days % 365 <= 1
      ? `${Math.round(days / 365)} year${Math.round(days / 365) === 1 ? "" : "s"}`
      : `${days} day${days === 1 ? "" : "s"}`;
  if (after <= now) return `${length}; expired`;
  if (before > now) return `${length}; not valid yet`;
  return length;
}

// ---- form values ↔ attributes ---------------------------------------------------------------------------------------

export interface TemplateFormValues {
  name: string;
  tagIds: string[];
  commonName: string;
  organization: string;
  organizationalUnit: string;
  locality: string;
  stateOrProvince: string;
  country: string;
  keyType: string;
  keyParam: string;
  signatureAlgorithm: string;
  notValidBefore: string;
  notValidAfter: string;
  version: string;
  isCa: boolean;
  keyUsage: KeyUsage[];
  extendedKeyUsage: ExtendedKeyUsage[];
  subjectAltNames: string[];
  /** What is typed in the SAN box and not added yet: taken on save (or the save stops on an invalid entry). */
  sanDraft: string;
}

export function defaultAttributes(now = nowSec()): TemplateAttributes {
  return {
    keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
    signatureAlgorithm: "sha256",
    notValidBefore: now,
    notValidAfter: now + 365 * DAY,
    version: 3,
    isCa: false,
    keyUsage: ["digitalSignature"],
    extendedKeyUsage: ["tlsWebServerAuthentication"],
  };
}

export function toFormValues(name: string, tagIds: string[], a: TemplateAttributes): TemplateFormValues {
  return {
    name,
    tagIds,
    commonName: a.commonName ?? "",
    organization: a.organization ?? "",
    organizationalUnit: a.organizationalUnit ?? "",
    locality: a.locality ?? "",
    stateOrProvince: a.stateOrProvince ?? "",
    country: a.country ?? "",
    keyType: a.keyAlgorithm.keyType,
    keyParam: keyParam(a.keyAlgorithm),
    signatureAlgorithm: fittingSignature(a.keyAlgorithm.keyType, a.signatureAlgorithm),
    notValidBefore: toLocalInput(Number(a.notValidBefore)),
    notValidAfter: toLocalInput(Number(a.notValidAfter)),
    version: String(a.version ?? 3),
    isCa: a.isCa ?? false,
    keyUsage: a.keyUsage ?? [],
    extendedKeyUsage: a.extendedKeyUsage ?? [],
    subjectAltNames: a.subjectAltNames ?? [],
    sanDraft: "",
  };
}

/** The attributes a form describes (§12.3): empty texts and sets left out, as the API stores them. */
export function toAttributes(v: TemplateFormValues): TemplateAttributes {
  const text = (s: string) => (s.trim() === "" ? undefined : s.trim());
  const a: TemplateAttributes = {
    keyAlgorithm: keyAlgorithm(v.keyType, v.keyParam),
    signatureAlgorithm: fittingSignature(v.keyType, v.signatureAlgorithm),
    notValidBefore: fromLocalInput(v.notValidBefore),
    notValidAfter: fromLocalInput(v.notValidAfter),
    version: Number(v.version),
    isCa: v.version === "3" && v.isCa,
  };
  for (const f of SUBJECT_FIELDS) {
    const t = text(v[f.key]);
    if (t !== undefined) a[f.key] = t;
  }
  const country = text(v.country);
  if (country !== undefined) a.country = country.toUpperCase();
  if (v.version === "3") {
    if (v.keyUsage.length) a.keyUsage = v.keyUsage;
    if (v.extendedKeyUsage.length) a.extendedKeyUsage = v.extendedKeyUsage;
    if (v.subjectAltNames.length) a.subjectAltNames = v.subjectAltNames;
  }
  return a;
}

const chars = (s: string) => [...s].length;
const subjectTooLong = (key: SubjectKey, v: string) => (chars(v) > SUBJECT_MAX_CHARS[key] ? `At most ${SUBJECT_MAX_CHARS[key]} characters` : null);

/** Client-side checks of §12.3, by form field. */
export const templateValidation = {
  name: (v: string) => (v.trim() === "" ? "Enter a name" : chars(v.trim()) > NAME_MAX ? `At most ${NAME_MAX} characters` : null),
  commonName: (v: string, all: TemplateFormValues) =>
    subjectTooLong("commonName", v) ??
    (SUBJECT_FIELDS.every((f) => all[f.key].trim() === "") && all.country.trim() === "" && (all.subjectAltNames.length === 0 || all.version !== "3")
      ? "Give a subject (at least one field) or a subject alternative name"
      : null),
  organization: (v: string) => subjectTooLong("organization", v),
  organizationalUnit: (v: string) => subjectTooLong("organizationalUnit", v),
  locality: (v: string) => subjectTooLong("locality", v),
  stateOrProvince: (v: string) => subjectTooLong("stateOrProvince", v),
  country: (v: string) => (v.trim() === "" || COUNTRY_RE.test(v.trim()) ? null : "Two letters, e.g. DE"),
  notValidBefore: (v: string) => {
    const t = fromLocalInput(v);
    return Number.isNaN(t) ? "Pick a date and time" : t < MIN_TIME || t > MAX_TIME ? "Within the years 1950 to 9999" : null;
  },
  notValidAfter: (v: string, all: TemplateFormValues) => {
    const t = fromLocalInput(v);
    if (Number.isNaN(t)) return "Pick a date and time";
    if (t < MIN_TIME || t > MAX_TIME) return "Within the years 1950 to 9999";
    return t <= fromLocalInput(all.notValidBefore) ? "Must be after “Not valid before”" : null;
  },
  subjectAltNames: (v: string[]) => (v.length > MAX_SANS ? `At most ${MAX_SANS} names` : null),
  // What `takeSanDraft` could not take blocks the save, named.
  sanDraft: (v: string, all: TemplateFormValues) =>
    all.version !== "3" || v.trim() === "" ? null : (takeSans(all.subjectAltNames, v).problem ?? "Press Add to add these names"),
};

/** Before saving: the valid names still typed in the SAN box join the list; refused ones stay there (and block the save). */
export function takeSanDraft(v: TemplateFormValues): Pick<TemplateFormValues, "subjectAltNames" | "sanDraft"> {
  if (v.version !== "3" || v.sanDraft.trim() === "") return { subjectAltNames: v.subjectAltNames, sanDraft: v.sanDraft };
  const t = takeSans(v.subjectAltNames, v.sanDraft);
  return { subjectAltNames: t.next, sanDraft: t.left };
}

/** API field names (`attributes.commonName`) → form fields. */
export const API_FIELD_MAP: Record<string, string> = {
  templateName: "name",
  "attributes.keyAlgorithm.keySize": "keyParam",
  "attributes.keyAlgorithm.curve": "keyParam",
  "attributes.keyAlgorithm.keyType": "keyType",
  ...Object.fromEntries(
    [
      "commonName",
      "organization",
      "organizationalUnit",
      "locality",
      "stateOrProvince",
      "country",
      "signatureAlgorithm",
      "notValidBefore",
      "notValidAfter",
      "version",
      "isCa",
      "keyUsage",
      "extendedKeyUsage",
      "subjectAltNames",
    ].map((k) => [`attributes.${k}`, k]),
  ),
  attributes: "commonName",
};

/** The subject as a distinguished name, in the certificate's order (C, ST, L, O, OU, CN). */
export function subjectLine(a: TemplateAttributes): string {
  const parts: [string, string | undefined][] = [
    ["C", a.country],
    ["ST", a.stateOrProvince],
    ["L", a.locality],
    ["O", a.organization],
    ["OU", a.organizationalUnit],
    ["CN", a.commonName],
  ];
  return parts
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
}

export type { CertificateTemplate, TemplateAttributes };
