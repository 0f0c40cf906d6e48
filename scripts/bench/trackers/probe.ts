#!/usr/bin/env bun
// Polls GET <url> back to back (with `gapMs` between requests) until SIGTERM, then prints every sample as JSON
// `[[startEpochMs, latencyMs, ok], ...]` on stdout. Runs in its own process so its timing is not skewed by the
// server's event loop.
const [url, gapArg] = Bun.argv.slice(2);
if (!url) throw new Error("usage: probe.ts <url> [gapMs]");
const gapMs = Number(gapArg ?? "20");
const samples: [number, number, boolean][] = [];
let stopping = false;

process.on("SIGTERM", () => {
  stopping = true;
});

while (!stopping) {
  const wall = Date.now();
  const t = performance.now();
  let ok = false;
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    ok = res.status === 200;
  } catch {
    ok = false;
  }
  samples.push([wall, performance.now() - t, ok]);
  await Bun.sleep(gapMs);
}
console.log(JSON.stringify(samples));
process.exit(0);
