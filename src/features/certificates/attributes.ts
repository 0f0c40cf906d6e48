// Certificate template attributes (supplement §12.3): validation into the stored, normalized form (TemplateAttributes,
// contract.ts). The limits, lists and patterns are shared-rules.ts's (the web checks the same ones).
import { isIP } from "node:net";
import { invalid } from "../../platform/core/errors";
import { checkCompatible, parseKeyAlg, parseSignatureAlgorithm } from "./algorithms";
import type { SanKind } from "./certificate";
import type { TemplateAttributes } from "./contract";
import {
  ASCII_PRINTABLE_RE,
  COUNTRY_RE,
  DNS_LABEL_RE,
  EXTENDED_KEY_USAGES,
  KEY_USAGES,
  MAX_DNS_NAME,
  MAX_SANS,
  MAX_TIME,
  MIN_TIME,
  SUBJECT_MAX_CHARS,
} from "./shared-rules";

const SUBJECT_FIELDS = Object.entries(SUBJECT_MAX_CHARS) as [keyof typeof SUBJECT_MAX_CHARS, number][];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null;

/** SAN classification of §12.3: IP literal, URI (`://`), email (`@`), DNS name; anything else → 400. */
export function classifySan(value: string, field: string): SanKind {
  if (isIP(value) !== 0 && !value.includes("%")) return "ip";
  if (value.includes("://")) {
    if (!ASCII_PRINTABLE_RE.test(value)) throw invalid(`${field}: a URI must be printable ASCII without spaces`);
    return "url";
  }
  if (value.includes("@")) {
    const at = value.lastIndexOf("@");
    if (!ASCII_PRINTABLE_RE.test(value) || at === 0 || at === value.length - 1) throw invalid(`${field}: must be a valid email address`);
    return "email";
  }
  const name = value.startsWith("*.") ? value.slice(2) : value;
  const labels = name.split(".");
  if (value.length <= MAX_DNS_NAME && labels.every((l) => DNS_LABEL_RE.test(l))) return "dns";
  throw invalid(`${field}: must be an IP address, a URI, an email address or a DNS name`);
}

/** Optional text of at most `max` characters, counted as code points (like passphrases), not UTF-16 units. */
function optionalText(raw: unknown, field: string, max: number): string | undefined {
  if (absent(raw)) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  if ([...raw].length > max) throw invalid(`${field}: must be at most ${max} characters`);
  return raw === "" ? undefined : raw;
}

function timestamp(raw: unknown, field: string): number {
  if (typeof raw !== "number" || !Number.isInteger(raw)) throw invalid(`${field}: must be an integer unix timestamp`);
  if (raw < MIN_TIME || raw > MAX_TIME) throw invalid(`${field}: must be within the years 1950 to 9999`);
  return raw;
}

function enumSet<T extends string>(raw: unknown, values: readonly T[], field: string): T[] | undefined {
  if (absent(raw)) return undefined;
  if (!Array.isArray(raw)) throw invalid(`${field}: must be an array of ${values.join(", ")}`);
  const out: T[] = [];
  raw.forEach((v, i) => {
    if (typeof v !== "string" || !(values as readonly string[]).includes(v)) throw invalid(`${field}[${i}]: must be one of ${values.join(", ")}`);
    if (!out.includes(v as T)) out.push(v as T);
  });
  return out.length > 0 ? out : undefined;
}

/** Validates `attributes` (all of §12.3) and returns the stored form: empty/unset optional fields omitted. */
export function parseAttributes(raw: unknown, field = "attributes"): TemplateAttributes {
  if (!isObject(raw)) throw invalid(`${field}: must be an object`);
  const out: Partial<TemplateAttributes> = {};
  for (const [key, max] of SUBJECT_FIELDS) {
    const v = optionalText(raw[key], `${field}.${key}`, max);
    if (v !== undefined) out[key] = v;
  }
  if (!absent(raw.country)) {
    if (typeof raw.country !== "string") throw invalid(`${field}.country: must be a string`);
    if (raw.country !== "") {
      if (!COUNTRY_RE.test(raw.country)) throw invalid(`${field}.country: must be exactly 2 ASCII letters`);
      out.country = raw.country.toUpperCase();
    }
  }
  if (absent(raw.keyAlgorithm)) throw invalid(`${field}.keyAlgorithm: is required`);
  const keyAlgorithm = parseKeyAlg(raw.keyAlgorithm, `${field}.keyAlgorithm`);
  if (absent(raw.signatureAlgorithm)) throw invalid(`${field}.signatureAlgorithm: is required`);
  const signatureAlgorithm = parseSignatureAlgorithm(raw.signatureAlgorithm, `${field}.signatureAlgorithm`);
  checkCompatible(signatureAlgorithm, keyAlgorithm.keyType, `${field}.signatureAlgorithm`);
  if (absent(raw.notValidBefore)) throw invalid(`${field}.notValidBefore: is required`);
  const notValidBefore = timestamp(raw.notValidBefore, `${field}.notValidBefore`);
  if (absent(raw.notValidAfter)) throw invalid(`${field}.notValidAfter: is required`);
  const notValidAfter = timestamp(raw.notValidAfter, `${field}.notValidAfter`);
  if (notValidBefore >= notValidAfter) throw invalid(`${field}.notValidAfter: must be after notValidBefore`);
  let version: 1 | 2 | 3 = 3;
  if (!absent(raw.version)) {
    if (raw.version !== 1 && raw.version !== 2 && raw.version !== 3) throw invalid(`${field}.version: must be 1, 2 or 3`);
    version = raw.version;
  }
  let isCa = false;
  if (!absent(raw.isCa)) {
    if (typeof raw.isCa !== "boolean") throw invalid(`${field}.isCa: must be a boolean`);
    isCa = raw.isCa;
  }
  const keyUsage = enumSet(raw.keyUsage, KEY_USAGES, `${field}.keyUsage`);
  const extendedKeyUsage = enumSet(raw.extendedKeyUsage, EXTENDED_KEY_USAGES, `${field}.extendedKeyUsage`);
  let subjectAltNames: string[] | undefined;
  if (!absent(raw.subjectAltNames)) {
    if (!Array.isArray(raw.subjectAltNames)) throw invalid(`${field}.subjectAltNames: must be an array of strings`);
    if (raw.subjectAltNames.length > MAX_SANS) throw invalid(`${field}.subjectAltNames: at most ${MAX_SANS} names`);
    const names: string[] = [];
    raw.subjectAltNames.forEach((v, i) => {
      if (typeof v !== "string") throw invalid(`${field}.subjectAltNames[${i}]: must be a string`);
      classifySan(v, `${field}.subjectAltNames[${i}]`);
      if (!names.includes(v)) names.push(v);
    });
    if (names.length > 0) subjectAltNames = names;
  }
  const hasSubject = SUBJECT_FIELDS.some(([key]) => out[key] !== undefined) || out.country !== undefined;
  if (!hasSubject && !subjectAltNames) throw invalid(`${field}: at least one subject field or subjectAltNames entry is required`);
  if (version < 3) {
    const v3Only = [
      ["isCa", isCa],
      ["keyUsage", keyUsage],
      ["extendedKeyUsage", extendedKeyUsage],
      ["subjectAltNames", subjectAltNames],
    ].find(([, v]) => v !== undefined && v !== false);
    if (v3Only) throw invalid(`${field}.${v3Only[0]}: needs version 3`);
  }
  return {
    ...out,
    keyAlgorithm,
    signatureAlgorithm,
    notValidBefore,
    notValidAfter,
    version,
    isCa,
    ...(keyUsage ? { keyUsage } : {}),
    ...(extendedKeyUsage ? { extendedKeyUsage } : {}),
    ...(subjectAltNames ? { subjectAltNames } : {}),
  };
}

/** SANs of stored attributes with their kinds. */
export const sansOf = (a: TemplateAttributes) => (a.subjectAltNames ?? []).map((value) => ({ kind: classifySan(value, "subjectAltNames"), value }));
