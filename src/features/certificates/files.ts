// Exported files (supplement §12.2, §12.4; the `ExportedFile` shape is contract.ts's): base64 data with a file name
// and MIME type, ZIP archives, and the passphrase rule (its length is shared-rules.ts's).
import { strToU8, zipSync } from "fflate";
import { invalid } from "../../platform/core/errors";
import type { ExportedFile } from "./contract";
import { MAX_PASSPHRASE } from "./shared-rules";

export const MIME = {
  pem: "application/x-pem-file",
  pkcs8: "application/pkcs8",
  pkcs12: "application/x-pkcs12",
  zip: "application/zip",
  der: "application/pkix-cert",
} as const;

/** The entity name with each character (code point, so one `_` for an astral one) outside `[A-Za-z0-9._-]`
 * replaced by `_`, plus the extension. */
export const fileNameFor = (name: string, ext: string) => `${name.replace(/[^A-Za-z0-9._-]/gu, "_")}.${ext}`;

export function exportedFile(format: string, name: string, ext: string, mimeType: string, data: Uint8Array): ExportedFile {
  return { format, fileName: fileNameFor(name, ext), mimeType, data: Buffer.from(data).toString("base64") };
}

/** ZIP archive of text files. */
export function zipTexts(files: Record<string, string>): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)])), { level: 6 });
}

/** Optional passphrase: absent or null → undefined; else a string of 1..1024 characters. */
export function optionalPassphrase(raw: unknown, field: string): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const length = [...raw].length;
  if (length < 1 || length > MAX_PASSPHRASE) throw invalid(`${field}: must be 1 to ${MAX_PASSPHRASE} characters`);
  return raw;
}

/** A required enum value. */
export function format<T extends string>(raw: unknown, values: readonly T[], field = "format"): T {
  if (raw === undefined || raw === null) throw invalid(`${field}: is required (one of ${values.join(", ")})`);
  if (typeof raw !== "string" || !(values as readonly string[]).includes(raw)) throw invalid(`${field}: must be one of ${values.join(", ")}`);
  return raw as T;
}
