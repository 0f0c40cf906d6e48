// Long responder hits through real HTTP (supplement §11.5 step 6, §11.6, §22): the HTTP server closes connections
// idle for 10 s, also while a request is being handled; a scripted hit still ends in its response or the 504 of its
// time limit, never a reset, including time spent waiting for a worker. Slow by nature: the three tests run at the
// same time (other users, other connections), ~13 s in all.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

let srv: TestServer;
let port: number;

beforeAll(async () => {
  srv = await startTestServer({
    env: {
      // One worker: three looping hits of 4 s queue behind each other, so the last one waits past the idle timeout.
      SECBOX_SCRIPTS_WORKERS: "1",
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_SCRIPT_TIMEOUT_SEC: "4",
    },
  });
  port = Number(new URL(srv.url).port);
});
afterAll(() => srv.stop());

/** One GET on its own connection, no body: the case Bun's idle timeout cuts. Never throws. */
async function get(host: string, path: string): Promise<{ status: number | null; body: string; ms: number; closedEarly: boolean }> {
  const t0 = performance.now();
  let text = "";
  let closed!: () => void;
  const done = new Promise<void>((r) => (closed = r));
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, d) => void (text += Buffer.from(d).toString("latin1")),
      close: () => closed(),
      error: () => closed(),
    },
  });
  sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  await Promise.race([done, Bun.sleep(90_000)]);
  sock.end();
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return { status: m ? Number(m[1]) : null, body: text.slice(text.indexOf("\r\n\r\n") + 4), ms: performance.now() - t0, closedEarly: m === null };
}

test.concurrent(
  "a 12 s script (professional tier, 30 s limit) gets its response, not a closed connection",
  async () => {
    const u = await quickUser(srv, "professional");
    const script = "await new Promise((r) => setTimeout(r, 12000)); return {statusCode: 201, body: 'late but here'}";
    const res = await u.client.post("/api/webhooks/responders", {
      name: "slow",
      location: { pathType: "=", path: "/slow" },
      settings: { script, requestsToTrack: 1 },
    });
    expect(res.status).toBe(201);
    const out = await get(`${u.handle}.localhost`, "/slow");
    expect(out.closedEarly).toBe(false);
    expect(out.status).toBe(201);
    expect(out.body).toBe("late but here");
    expect(out.ms).toBeGreaterThan(11_500);
    const [rec] = (await u.client.get(`/api/webhooks/responders/${res.json.id}/_history`)).json;
    expect(rec.durationMs).toBeGreaterThanOrEqual(11_500);
  },
  60_000,
);

test.concurrent(
  "3 looping hits on a 4 s tier limit, one worker: all 3 answer 504 Script timed out (the last after ~12 s of queueing)",
  async () => {
    const u = await quickUser(srv, "basic");
    const res = await u.client.post("/api/webhooks/responders", {
      name: "loop",
      location: { pathType: "=", path: "/loop" },
      settings: { script: "while (true) {}" },
    });
    expect(res.status).toBe(201);
    const outs = await Promise.all(Array.from({ length: 3 }, () => get(`${u.handle}.localhost`, "/loop")));
    expect(outs.map((o) => o.status)).toEqual(Array(3).fill(504));
    expect(outs.every((o) => o.body === "Script timed out")).toBe(true);
    // the point of the test: some of them waited longer than the server's 10 s idle timeout
    expect(Math.max(...outs.map((o) => o.ms))).toBeGreaterThan(10_500);
  },
  120_000,
);

test.concurrent(
  "after a long hit the keep-alive connection is idle-limited again (closed ~10 s after the response)",
  async () => {
    const u = await quickUser(srv, "professional");
    const res = await u.client.post("/api/webhooks/responders", {
      name: "short",
      location: { pathType: "=", path: "/short" },
      settings: { script: "await new Promise((r) => setTimeout(r, 50)); return {body: 'ok'}" },
    });
    expect(res.status).toBe(201);
    let text = "";
    let closedAt = 0;
    let closed!: () => void;
    const done = new Promise<void>((r) => (closed = r));
    const sock = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_s, d) => void (text += Buffer.from(d).toString("latin1")),
        close: () => {
          closedAt = performance.now();
          closed();
        },
        error: () => closed(),
      },
    });
    const t0 = performance.now();
    sock.write(`GET /short HTTP/1.1\r\nHost: ${u.handle}.localhost\r\n\r\n`); // keep-alive
    // closed by the server's idle timer (10 s after the response), not left open: the 30 s wait is a backstop
    await Promise.race([done, Bun.sleep(30_000)]);
    expect(text).toStartWith("HTTP/1.1 200");
    expect(closedAt).toBeGreaterThan(t0);
  },
  60_000,
);
