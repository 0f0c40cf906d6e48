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

/**
 * EncryptedPrivateKeyInfo of `pkcs8` as PBES2 (PBKDF2-HMAC-SHA256 with `iterations`, AES-256-CBC), built here with
 * node:crypto so any iteration count can be written; with `fake`, random bytes stand in for the ciphertext (for
 * counts no test should pay for: the server must refuse them before deriving anything).
 */
export async function encryptedPkcs8(pkcs8: Uint8Array, passphrase: string, iterations: number, fake = false): Promise<Uint8Array> {
  const [{ createCipheriv, pbkdf2Sync, randomBytes }, asn1js, pkijs] = await Promise.all([import("node:crypto"), import("asn1js"), import("pkijs")]);
  const salt = randomBytes(16);
  const iv = randomBytes(16);
  let encrypted: Buffer;
  if (fake) encrypted = randomBytes(pkcs8.byteLength + 16 - (pkcs8.byteLength % 16));
  else {
    const key = pbkdf2Sync(passphrase, salt, iterations, 32, "sha256");
    const c = createCipheriv("aes-256-cbc", key, iv);
    encrypted = Buffer.concat([c.update(pkcs8), c.final()]);
  }
  const ab = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  const kdf = new pkijs.PBKDF2Params({
    salt: new asn1js.OctetString({ valueHex: ab(salt) }),
    iterationCount: iterations,
    prf: new pkijs.AlgorithmIdentifier({ algorithmId: "1.2.840.113549.2.9", algorithmParams: new asn1js.Null() }),
  });
  const pbes2 = new pkijs.PBES2Params({
    keyDerivationFunc: new pkijs.AlgorithmIdentifier({ algorithmId: "1.2.840.113549.1.5.12", algorithmParams: kdf.toSchema() }),
    encryptionScheme: new pkijs.AlgorithmIdentifier({ algorithmId: "2.16.840.1.101.3.4.1.42", algorithmParams: new asn1js.OctetString({ valueHex: ab(iv) }) }),
  });
  const alg = new pkijs.AlgorithmIdentifier({ algorithmId: "1.2.840.113549.1.5.13", algorithmParams: pbes2.toSchema() });
  const seq = new asn1js.Sequence({ value: [alg.toSchema(), new asn1js.OctetString({ valueHex: ab(encrypted) })] });
  return new Uint8Array(seq.toBER(false));
}
