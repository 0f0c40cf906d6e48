// An HTTP body as the API gives it (base64 of the stored bytes, and the original size): shown as pretty JSON, text
// or a hex dump (what is available; the best one first), with a download of the bytes. A body cut when it was
// stored says so. Large bodies show their first part (the download has all the stored bytes).
import { Button, Code, Group, SegmentedControl, Stack, Text } from "@mantine/core";
import { useMemo, useState } from "react";
import { formatBytes } from "./format";

const SHOW_TEXT_CHARS = 256 * 1024;
const SHOW_HEX_BYTES = 16 * 1024;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

export function decodeBase64(b64: string | undefined): Uint8Array {
  if (!b64) return new Uint8Array(0);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The bytes as text when they are UTF-8 without control characters other than tab, CR and LF; else null. */
export function asText(bytes: Uint8Array): string | null {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return null;
  }
  // eslint-disable-next-line no-control-regex
  return /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text) ? null : text;
}

export function hexDump(bytes: Uint8Array, limit = SHOW_HEX_BYTES): string {
  const lines: string[] = [];
  const n = Math.min(bytes.length, limit);
  for (let off = 0; off < n; off += 16) {
    const row = bytes.subarray(off, Math.min(off + 16, n));
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${off.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  |${ascii}|`);
  }
  return lines.join("\n");
}

type Mode = "json" | "text" | "hex";

export function saveBytes(bytes: Uint8Array, filename: string, type = "application/octet-stream") {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function BodyView({
  base64,
  size,
  contentType = "",
  filename,
  label,
}: {
  base64?: string;
  size: number;
  contentType?: string;
  filename: string;
  label: string;
}) {
  const bytes = useMemo(() => decodeBase64(base64), [base64]);
  const text = useMemo(() => asText(bytes), [bytes]);
  const json = useMemo(() => {
    if (text === null || !(/json/i.test(contentType) || /^\s*[[{]/.test(text))) return null;
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return null;
    }
  }, [text, contentType]);
  const modes: { value: Mode; label: string }[] = [
    ...(json !== null ? [{ value: "json" as const, label: "JSON" }] : []),
    ...(text !== null ? [{ value: "text" as const, label: "Text" }] : []),
    { value: "hex", label: "Hex" },
  ];
  const [picked, setPicked] = useState<Mode | null>(null);
  const mode: Mode = picked && modes.some((m) => m.value === picked) ? picked : modes[0]!.value;

  if (size === 0 && bytes.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No body
      </Text>
    );
  const shown = mode === "json" ? json! : mode === "text" ? text! : hexDump(bytes);
  const cut = mode !== "hex" && shown.length > SHOW_TEXT_CHARS;
  return (
    <Stack gap={6}>
      <Group justify="space-between" gap="xs">
        <Group gap="xs">
          {modes.length > 1 && (
            <SegmentedControl size="xs" aria-label={`${label}: view as`} value={mode} onChange={(v) => setPicked(v as Mode)} data={modes} />
          )}
          <Text size="xs" c="dimmed">
            {formatBytes(size)}
            {bytes.length < size ? ` (stored: the first ${formatBytes(bytes.length)})` : ""}
            {mode === "hex" && bytes.length > SHOW_HEX_BYTES ? ` · showing the first ${formatBytes(SHOW_HEX_BYTES)}` : ""}
          </Text>
        </Group>
        <Button
          size="compact-xs"
          variant="default"
          onClick={() => saveBytes(bytes, filename, contentType || undefined)}
          aria-label={`Download ${label.toLowerCase()}`}
        >
          Download
        </Button>
      </Group>
      <Code
        block
        tabIndex={0}
        aria-label={label}
        style={{ maxHeight: 360, overflow: "auto", whiteSpace: mode === "hex" ? "pre" : "pre-wrap", wordBreak: "break-all", fontSize: 12 }}
      >
        {cut ? `${shown.slice(0, SHOW_TEXT_CHARS)}\n…` : shown}
      </Code>
    </Stack>
  );
}
