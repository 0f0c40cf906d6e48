// The scripts of issue 29 ("one script crashes a worker for everyone on it"), for the tests (host-data.test.ts,
// fairness.test.ts) and the fairness benchmark: each hands the script more data from a host function than a 10 MiB
// memory limit holds. The first three trapped the worker ("Out of bounds memory access": quickjs-emscripten wrote the
// data from address 0 of the instance after a failed malloc) and every other script on it failed; the next one wrote
// over the instance without a trap; the others went beyond the limit. Each must end as its own run's memory error
// (`{kind: "memory"}`), the worker unharmed. Not imported by the server.
// JOB_OOM_SCRIPTS: the memory limit reached inside a promise job (QuickJS's out-of-memory paths there broke the
// instance: engine/memory.ts); at 16 MiB each lost the worker on the old code.
export const CRASH_SCRIPTS: readonly string[] = [
  "new TextDecoder().decode(new ArrayBuffer(6 * 1024 * 1024)).length",
  "Sandbox.core.decode(new Uint8Array(6 * 1024 * 1024)).length",
  "atob('A'.repeat(8 * 1024 * 1024)).length",
  "new TextDecoder().decode(new Uint8Array(6 * 1024 * 1024).fill(65)).length",
  "btoa('x'.repeat(6 * 1024 * 1024)).length",
  "new TextEncoder().encode('\\u20ac'.repeat(3 * 1024 * 1024)).length",
  "Sandbox.core.encode('x'.repeat(8 * 1024 * 1024)).length",
];

/** Allocation loops run as a promise job while the script waits: each must end as its run's memory error. */
export const JOB_OOM_SCRIPTS: readonly string[] = [
  "const a = []; while (true) a.push('y'.repeat(2e6) + a.length)",
  "const a = []; while (true) a.push(new Array(1e5).fill(a.length))",
  "const a = []; while (true) a.push({ i: a.length, s: 'x' + a.length })",
  "const a = []; for (;;) { try { while (true) a.push('y'.repeat(50000) + a.length) } catch (e) {} }",
  "const a = []; while (true) a.push(Array(1000).fill(a.length).map(String))",
].map((body) => `Promise.resolve().then(() => { ${body} }); await new Promise((r) => setTimeout(r, 5000)); return 'done'`);
