// Test helpers of the certificates feature (imported by its *.test.ts only): run the system openssl on files in a
// temporary directory, and build template attributes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface OpenSslResult {
  code: number;
  out: string;
  err: string;
}

/** A temporary directory for files openssl reads; `cleanup()` removes it. */
export function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "secbox-cert-test-"));
  return {
    dir,
    file(name: string, data: Uint8Array | string) {
      const path = join(dir, name);
      writeFileSync(path, data);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs `openssl <args>` (stdin optional). */
export function openssl(args: string[], stdin?: Uint8Array | string): OpenSslResult {
  const r = Bun.spawnSync(["openssl", ...args], { stdin: stdin === undefined ? "ignore" : Buffer.from(stdin as any), stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, out: r.stdout.toString(), err: r.stderr.toString() };
}

/** Like `openssl` but fails the test with openssl's message when it does not exit 0; stdout then stderr (where
 *  `pkcs12 -info` writes). */
export function opensslOk(args: string[], stdin?: Uint8Array | string): string {
  const r = openssl(args, stdin);
  if (r.code !== 0) throw new Error(`openssl ${args.join(" ")} failed (${r.code}): ${r.err}`);
  return `${r.out}\n${r.err}`;
}

export const b64 = (data: string) => new Uint8Array(Buffer.from(data, "base64"));

export const DAY = 86_400;
export const NOW = Math.floor(Date.now() / 1000);

/** Minimal valid attributes; override any field. */
export function attrs(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    commonName: "test.example",
    keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
    signatureAlgorithm: "sha256",
    notValidBefore: NOW - DAY,
    notValidAfter: NOW + 30 * DAY,
    ...overrides,
  };
}
