// The system `openssl` program (supplement §12.1, `[certificates] openssl`): DSA key generation and DSA signatures,
// which Bun's crypto lacks. Found once at start; every run has a timeout and is killed when it exceeds it.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { invalid } from "../../platform/core/errors";

const RUN_TIMEOUT_MS = 60_000;

export class OpenSsl {
  /** Absolute path of the program, or undefined when absent or disabled (`openssl = ""`). */
  readonly path: string | undefined;

  constructor(command: string) {
    this.path = command === "" ? undefined : (Bun.which(command) ?? undefined);
  }

  get available(): boolean {
    return this.path !== undefined;
  }

  /** 400 ALGORITHM_UNAVAILABLE unless the program is there. */
  require(): string {
    if (this.path === undefined) throw invalid("DSA is unavailable: no openssl program is configured on this server", "ALGORITHM_UNAVAILABLE");
    return this.path;
  }

  /** Runs `openssl <args>` with `stdin`, returns stdout; throws (500) on failure or timeout. Never logs input. */
  async run(args: string[], stdin?: Uint8Array | string, timeoutMs = RUN_TIMEOUT_MS): Promise<Uint8Array> {
    const proc = Bun.spawn([this.require(), ...args], {
      stdin: stdin === undefined ? "ignore" : typeof stdin === "string" ? Buffer.from(stdin) : stdin,
      stdout: "pipe",
      stderr: "pipe",
      timeout: timeoutMs,
      killSignal: "SIGKILL",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" },
    });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
    if (proc.signalCode) throw new Error(`openssl ${args[0]} was stopped (${proc.signalCode}) after ${timeoutMs} ms`);
    if (code !== 0) throw new Error(`openssl ${args[0]} failed (exit ${code}): ${err.split("\n")[0]?.slice(0, 200) ?? ""}`);
    return out;
  }

  /** DSA key pair of `bits`: PKCS#8 DER private key and SPKI DER public key. */
  async generateDsa(bits: number): Promise<{ pkcs8: Uint8Array; spki: Uint8Array }> {
    const pem = new TextDecoder().decode(await this.run(["dsaparam", "-genkey", "-noout", String(bits)]));
    const pkcs8 = pemToDer(pem, "PRIVATE KEY");
    const spki = await this.run(["pkey", "-inform", "DER", "-pubout", "-outform", "DER"], pkcs8);
    return { pkcs8, spki };
  }

  /** DSA signature (DER Dss-Sig-Value) of `data` with `hash`; the key goes through stdin, never to disk. */
  async signDsa(hash: "sha1" | "sha256", pkcs8: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
    const dir = await mkdtemp(join(tmpdir(), "secbox-dsa-"));
    try {
      const file = join(dir, "tbs.der");
      await writeFile(file, data, { mode: 0o600 });
      return await this.run(["dgst", `-${hash}`, "-keyform", "DER", "-sign", "/dev/stdin", "-binary", file], pkcs8);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** The DER inside the first PEM block with this label. */
export function pemToDer(pem: string, label: string): Uint8Array {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(pem);
  if (!m) throw new Error(`no ${label} PEM block`);
  return new Uint8Array(Buffer.from(m[1]!.replace(/\s+/g, ""), "base64"));
}

export function derToPem(der: Uint8Array, label: string): string {
  const b64 = Buffer.from(der)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}
