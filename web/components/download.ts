// Downloads made in the page: an API answer (an `ExportedFile`'s base64 `data`, or a streamed attachment) becomes a
// Blob saved under the file name the API gave, so the file on disk is named as the API names it.

/** The bytes of base64 text. */
export function base64Bytes(b64: string): Uint8Array<ArrayBuffer> {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Saves `blob` as `fileName` through a temporary link (the browser's own download). */
export function downloadBlob(blob: Blob, fileName: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  a.rel = "noopener";
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked later: revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** An `ExportedFile` (supplement §12.2): saved under its `fileName`; returns its bytes (for a summary). */
export function downloadExported(file: { data: string; fileName: string; mimeType: string }): Uint8Array<ArrayBuffer> {
  const bytes = base64Bytes(file.data);
  downloadBlob(new Blob([bytes], { type: file.mimeType }), file.fileName);
  return bytes;
}

/** The file name of a `Content-Disposition: attachment; filename="…"` header, or `fallback`. */
export function attachmentName(header: string | null, fallback: string): string {
  const m = header ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header) : null;
  if (!m) return fallback;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}

export const formatFileSize = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
