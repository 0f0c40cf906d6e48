// Checks that the sandbox works inside a `bun build --compile` binary (worker entry found in $bunfs, QuickJS and
// libsodium WASM embedded). Build and run:
//   bun build --compile --bytecode --format=esm --minify-syntax --minify-identifiers \
//     scripts/bench/sandbox/compile-check.ts src/sandbox/worker.ts --outfile /tmp/sandbox-check && /tmp/sandbox-check
import sodium from "libsodium-wrappers";
import { createLogger } from "../../../src/platform/log";
import { ScriptPool } from "../../../src/sandbox/pool";

const pool = new ScriptPool({ workers: 2, queueLimit: 10, allowPrivate: true, log: createLogger("warn") });
const limits = { memoryMib: 10, timeoutMs: 2000, proxyTimeoutMs: 5000, maxProxyBodyBytes: 1 << 20 };
await sodium.ready;
const kp = sodium.crypto_box_keypair();
const pk = Buffer.from(kp.publicKey).toString("base64url");
const checks: [string, unknown][] = [
  ["(async () => 1 + 1)()", 2],
  ["JSON.parse(Sandbox.core.decode(context.body)).n * 2", 42],
  [`await Secbox.crypto.seal('${pk}', 'sealed text')`, "sealed"],
  ["(await Secbox.crypto.sha256('abc')).slice(0, 8)", "ba7816bf"],
];
let failed = 0;
for (const [source, expected] of checks) {
  const r = await pool.run({ source, context: { body: new TextEncoder().encode('{"n":21}') }, limits });
  let value = r.ok ? r.value : undefined;
  if (expected === "sealed" && typeof value === "string") {
    value =
      sodium.to_string(sodium.crypto_box_seal_open(Buffer.from(value, "base64url"), kp.publicKey, kp.privateKey)) === "sealed text"
        ? "sealed"
        : "bad";
  }
  const ok = r.ok && JSON.stringify(value) === JSON.stringify(expected);
  if (!ok) failed++;
  console.log(ok ? "ok  " : "FAIL", source.slice(0, 60), JSON.stringify(r.ok ? r.value : r.error));
}
if (!pool.stats().sharedModule) {
  failed++;
  console.log("FAIL the workers do not share the compiled QuickJS module");
}
// a source run a few times on the same worker: its later runs start from its compiled image
for (let i = 0; i < 6; i++) await pool.run({ source: "context.n + 1", context: { n: i }, limits });
if (pool.stats().imageRuns === 0) {
  failed++;
  console.log("FAIL no execution started from a source's memory image (see src/sandbox/engine/image.ts keepImage)");
}
// Every worker, once started: the checks above may all run on the first worker while the second one still
// starts (it waits for the first one's compiled module), and a worker reports its image only when ready.
await pool.ready();
if (pool.stats().snapshotWorkers !== pool.stats().workers) {
  failed++;
  console.log("FAIL not every worker starts executions from the memory image (see src/sandbox/engine/quickjs-internals.ts, image.ts)");
}
await pool.close();
console.log(failed === 0 ? "compiled sandbox: all checks passed" : `compiled sandbox: ${failed} checks failed`);
process.exit(failed === 0 ? 0 : 1);
