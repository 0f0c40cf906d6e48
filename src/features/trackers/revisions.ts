// Revision values (supplement §17.1): stored bytes, the `data` view of them, text for diffs, and unified diffs
// (jsdiff) between consecutive revisions.
import { createTwoFilesPatch } from "diff";

/** Revision value cap (supplement §15.3, §22): longer values are cut. */
export const MAX_REVISION_BYTES = 1_048_576;
/** `_history {diff: true}` diffs are cut here (supplement §17.1). */
export const MAX_DIFF_BYTES = 256 * 1024;
/** Lines of diff in a change email (supplement §18.2). */
export const EMAIL_DIFF_LINES = 200;
/** Time budget of one diff computation (jsdiff gives up and we say so). */
const DIFF_TIMEOUT_MS = 2000;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lossyUtf8 = new TextDecoder("utf-8");
const encoder = new TextEncoder();

export const utf8 = (s: string) => encoder.encode(s);
export const lossyText = (b: Uint8Array) => lossyUtf8.decode(b);

/** Cuts to `max` bytes (a value longer than the cap is stored cut, supplement §15.3). */
export const cutBytes = (b: Uint8Array, max = MAX_REVISION_BYTES) => (b.byteLength > max ? b.subarray(0, max) : b);

/** A string cut to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function cutUtf8(s: string, maxBytes: number): string {
  if (s.length <= maxBytes / 3) return s; // even 3-byte characters fit
  const bytes = encoder.encode(s);
  if (bytes.byteLength <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return lossyUtf8.decode(bytes.subarray(0, end));
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `data`: the parsed value when the bytes are one valid JSON text, else the bytes as UTF-8 text (lossy). */
export function revisionData(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return lossyUtf8.decode(bytes);
  }
  const trimmed = text.trim();
  if (trimmed !== "") {
    try {
      return JSON.parse(text);
    } catch {
      // not JSON: the text itself
    }
  }
  return text;
}

/** Text a diff is computed on: JSON values pretty-printed with 2 spaces, text as is. */
export function diffText(bytes: Uint8Array): string {
  const data = revisionData(bytes);
  return typeof data === "string" && !looksLikeJsonString(bytes) ? data : JSON.stringify(data, null, 2);
}

/** True when the bytes are a JSON string literal (`"…"`), whose data is a string but which was JSON. */
function looksLikeJsonString(bytes: Uint8Array): boolean {
  let i = 0;
  while (i < bytes.byteLength && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return bytes[i] === 0x22;
}

/**
 * Unified diff from `older` to `newer` (labels carry the revision times), cut at `maxBytes`. jsdiff runs in its
 * asynchronous mode so a large diff never blocks the event loop; one that cannot be computed within the time
 * budget is replaced by a one-line notice.
 */
export function unifiedDiff(
  older: { text: string; createdAt: number },
  newer: { text: string; createdAt: number },
  maxBytes = MAX_DIFF_BYTES,
): Promise<string> {
  return new Promise((resolve) => {
    createTwoFilesPatch(
      "previous",
      "current",
      withNewline(older.text),
      withNewline(newer.text),
      new Date(older.createdAt * 1000).toISOString(),
      new Date(newer.createdAt * 1000).toISOString(),
      {
        context: 3,
        timeout: DIFF_TIMEOUT_MS,
        headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true },
        callback: (patch: string | undefined) =>
          resolve(patch === undefined ? "(the difference is too large to compute)\n" : cutUtf8(patch, maxBytes)),
      },
    );
  });
}

const withNewline = (s: string) => (s.endsWith("\n") || s === "" ? s : `${s}\n`);

/** At most `maxLines` lines, then `…`. */
export function limitLines(text: string, maxLines = EMAIL_DIFF_LINES): string {
  const lines = text.replace(/\n$/, "").split("\n");
  return lines.length <= maxLines ? lines.join("\n") : `${lines.slice(0, maxLines).join("\n")}\n…`;
}
