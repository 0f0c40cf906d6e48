// The peer side of scripts/bench/sandbox: the same five scenarios under isolated-vm (Node 20), a fresh V8 isolate
// and context per execution, the same scripts, `Sandbox.core.decode` as in-isolate JS and op_proxy_request as an
// async host reference. Prints one JSON object on stdout. Run by ../bench.ts (node --no-node-snapshot bench.mjs URL).
import { readFileSync } from "node:fs";
import ivm from "isolated-vm";
import { measure as measureWith } from "../measure.mjs";

const scenarios = JSON.parse(readFileSync(new URL("../scenarios.json", import.meta.url), "utf8"));
const proxyUrl = process.argv[2];
const N = Number(process.env.BENCH_N ?? 2000);
const NPROXY = Number(process.env.BENCH_N_PROXY ?? 500);
const WARM = Number(process.env.BENCH_WARMUP ?? 300);

const expression = (src) => `(async () => (await (\n${src}\n)))()`;
const body = (src) => `(async () => {\n${src}\n})()`;

// What the responder and proxy scenarios need of Sandbox, compiled into each fresh context (the peer's prelude).
const SHIM = `globalThis.Sandbox = { core: {
  decode(u8) { let s = ""; for (let i = 0; i < u8.length; i += 4096) s += String.fromCharCode.apply(null, u8.subarray(i, i + 4096)); return decodeURIComponent(escape(s)); },
  ops: { op_proxy_request(options) { return __proxy.apply(undefined, [options.url], { result: { promise: true, copy: true } }); } },
} };`;

const proxyRef = new ivm.Reference(async (url) => {
  const res = await fetch(url);
  const buf = new Uint8Array(await res.arrayBuffer());
  return new ivm.ExternalCopy({ statusCode: res.status, headers: Object.fromEntries(res.headers), body: buf }).copyInto();
});

/** One execution in a fresh isolate. `sync`: isolate, context and compile on this thread (fastest one at a time);
 *  otherwise every step is async (lets isolated-vm spread concurrent executions over its thread pool). The peer
 *  gets its faster variant per scenario. */
async function execute(code, ctxData, withShim, sync = true) {
  const isolate = new ivm.Isolate({ memoryLimit: 16 });
  try {
    const context = sync ? isolate.createContextSync() : await isolate.createContext();
    const jail = context.global;
    const data = new ivm.ExternalCopy(ctxData).copyInto();
    if (sync) jail.setSync("context", data);
    else await jail.set("context", data);
    if (withShim) {
      if (sync) {
        jail.setSync("__proxy", proxyRef);
        context.evalSync(SHIM);
      } else {
        await jail.set("__proxy", proxyRef);
        await context.eval(SHIM);
      }
    }
    const script = sync ? isolate.compileScriptSync(code) : await isolate.compileScript(code);
    return await script.run(context, { promise: true, copy: true, timeout: 10_000 });
  } finally {
    isolate.dispose();
  }
}

const measure = (n, warm, fn, concurrency = 1) => measureWith(n, warm, fn, concurrency, () => globalThis.gc?.());

const items = Array.from({ length: scenarios.items }, (_, i) => ({ id: i, name: `item-${i}`, value: i * 3 }));
const responderBody = new TextEncoder().encode(JSON.stringify(items));
const trivial = expression(scenarios.trivial);

// Process warm-up, as on our side (BENCH_PROCESS_WARMUP runs of the trivial script before the scenarios); capped at
// 1,000 here: a fresh isolate per run shares no compiled code between runs, and the peer is ~7x slower per run.
const PROCESS_WARM = Math.min(1000, Number(process.env.BENCH_PROCESS_WARMUP ?? 4000));
for (let i = 0; i < PROCESS_WARM; i++) await execute(trivial, {}, false);

const out = {};
out.cold = await measure(N, WARM, (i) => execute(expression(`${scenarios.trivial} /* ${i} */`), {}, false));
out.trivial = await measure(N, WARM, () => execute(trivial, {}, false));
const responder = body(scenarios.responder);
out.responder = await measure(N, WARM, () => execute(responder, { body: responderBody }, true));
const check = await execute(responder, { body: responderBody }, true);
if (JSON.parse(check.body).count !== scenarios.items) throw new Error("responder scenario returned a wrong result");
const proxy = body(scenarios.proxy);
const pcheck = await execute(proxy, { url: proxyUrl }, true);
if (pcheck.status !== 200 || pcheck.bytes !== scenarios.proxyBodyBytes) throw new Error(`proxy scenario returned ${JSON.stringify(pcheck)}`);
out.proxy = await measure(NPROXY, Math.min(WARM, 100), () => execute(proxy, { url: proxyUrl }, true));
out.serialTrivial = out.trivial.opsPerSec;
const parSync = await measure(N, WARM, () => execute(trivial, {}, false, true), scenarios.parallel);
const parAsync = await measure(N, WARM, () => execute(trivial, {}, false, false), scenarios.parallel);
out.parallel = parAsync.opsPerSec > parSync.opsPerSec ? parAsync : parSync;
out.runtime = `isolated-vm ${JSON.parse(readFileSync(new URL("./node_modules/isolated-vm/package.json", import.meta.url), "utf8")).version}, Node ${process.version}`;
console.log(JSON.stringify(out));
