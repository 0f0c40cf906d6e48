#!/usr/bin/env bun
// Upstream API for the trackers benchmark, in its own process so it does not share the server's event loop.
// Every response differs (a counter), so every tracker run stores a new revision: the write-heavy case.
// Prints `PORT <n>` on stdout once listening.
let n = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    n++;
    const path = new URL(req.url).pathname;
    return Response.json({ path, n, items: [{ id: n % 97, name: "release", version: `1.${n % 13}.0` }] });
  },
});
console.log(`PORT ${server.port}`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
