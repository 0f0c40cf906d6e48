#!/usr/bin/env bun
// (a) The ceiling: a bare Bun.serve answering every request with the same fixed body the responders serve.
//   bun scripts/bench/responders/raw-server.ts <port>
const port = Number(Bun.argv[2] ?? 0);
const body = new TextEncoder().encode('{"ok":true}');
const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
console.log(`ready ${server.port}`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
