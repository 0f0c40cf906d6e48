// Per-source in-flight cap (issue 29, the flood; `server.max_in_flight_per_client`): requests held in flight by a
// body that has not fully arrived; the next request of that client address is answered 503 with Retry-After on a
// connection that stays open, another address is served, and the slots come back when the held requests end.
// Behind a trusted proxy the forwarded address is the client.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { startTestServer, type TestServer } from "../../tests/harness";

/** A raw HTTP/1.1 connection from `localAddress` (the loopback range: 127.0.0.2 is another client). */
async function openFrom(port: number, localAddress = "127.0.0.1") {
  let text = "";
  let closedResolve!: () => void;
  const closed = new Promise<void>((r) => (closedResolve = r));
  const sock: Socket = connect({ host: "127.0.0.1", port, localAddress });
  await new Promise<void>((res, rej) => {
    sock.once("connect", res);
    sock.once("error", rej);
  });
  sock.on("data", (d) => (text += d.toString("latin1")));
  sock.on("close", () => closedResolve());
  sock.on("error", () => closedResolve());
  return {
    write: (s: string) => sock.write(s),
    end: () => sock.destroy(),
    closed,
    get text() {
      return text;
    },
  };
}

/** Whole response text of one request (it says Connection: close). */
async function once(port: number, request: string, localAddress = "127.0.0.1"): Promise<string> {
  const s = await openFrom(port, localAddress);
  s.write(request);
  await Promise.race([s.closed, Bun.sleep(5000)]);
  s.end();
  return s.text;
}

const statusOf = (raw: string) => Number(raw.split(" ")[1]);
const headerOf = (raw: string, name: string) =>
  raw
    .slice(0, raw.indexOf("\r\n\r\n"))
    .split("\r\n")
    .find((l) => l.toLowerCase().startsWith(`${name}:`))
    ?.slice(name.length + 1)
    .trim();

/** A sign-in whose body never fully arrives: it stays in flight (the body parser waits) until `finish`. */
async function heldRequest(port: number, extraHeaders = "") {
  const s = await openFrom(port);
  s.write(
    `POST /api/auth/signin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 40\r\n${extraHeaders}Connection: close\r\n\r\n{"email":`,
  );
  return {
    async finish() {
      s.write(`"a@example.com","password":"x"}`.padEnd(31, " "));
      await Promise.race([s.closed, Bun.sleep(5000)]);
      s.end();
      return s.text;
    },
    end: s.end,
  };
}

const KEEP = "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/** One request on an open keep-alive connection: the response text (Content-Length framed). */
async function exchange(s: Awaited<ReturnType<typeof openFrom>>, request: string): Promise<string> {
  const start = s.text.length;
  s.write(request);
  for (let i = 0; i < 400; i++) {
    const t = s.text.slice(start);
    const head = t.indexOf("\r\n\r\n");
    if (head >= 0 && t.length >= head + 4 + Number(headerOf(t, "content-length") ?? 0)) return t;
    await Bun.sleep(25);
  }
  return s.text.slice(start);
}

const STATUS = (extra = "") => `GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`;

/** Sends the status request until it is refused (the held requests are in flight once their heads are parsed). */
async function firstRefusal(port: number, extra = ""): Promise<string | undefined> {
  for (let i = 0; i < 40; i++) {
    const raw = await once(port, STATUS(extra));
    if (statusOf(raw) === 503) return raw;
    await Bun.sleep(25);
  }
  return undefined;
}

describe("per-source in-flight cap (peer address)", () => {
  let srv: TestServer;
  let port: number;
  beforeAll(async () => {
    srv = await startTestServer({ env: { SECBOX_SERVER_MAX_IN_FLIGHT_PER_CLIENT: "2" } });
    port = Number(new URL(srv.url).port);
  });
  afterAll(() => srv.stop());

  test("a third request in flight from one address → 503 Retry-After: 1 on a kept connection; another address is served; slots come back", async () => {
    const held = [await heldRequest(port), await heldRequest(port)];
    const keep = await openFrom(port);
    try {
      const refused = await firstRefusal(port);
      expect(refused).toBeDefined();
      expect(headerOf(refused!, "retry-after")).toBe("1");
      expect(headerOf(refused!, "content-type")).toBe("application/json; charset=utf-8");
      expect(JSON.parse(refused!.slice(refused!.indexOf("\r\n\r\n") + 4))).toEqual({
        message: "Too many requests in progress from this client address; retry in 1 s",
        code: "RATE_LIMITED",
      });
      // A keep-alive connection is refused and kept: its next request, once the held ones are done, is served.
      expect(statusOf(await exchange(keep, KEEP))).toBe(503);
      // 127.0.0.2 is another client: not refused while 127.0.0.1 is at its cap.
      expect(statusOf(await once(port, STATUS(), "127.0.0.2"))).toBe(200);
      // The held requests themselves were never refused: they finish with their own answer (a wrong sign-in).
      for (const h of held.splice(0)) expect(statusOf(await h.finish())).toBe(401);
      expect(statusOf(await exchange(keep, KEEP))).toBe(200);
      expect(statusOf(await once(port, STATUS()))).toBe(200);
    } finally {
      for (const h of held) h.end();
      keep.end();
    }
  });
});

describe("per-source in-flight cap behind a trusted proxy (server.trust_proxy: the forwarded address)", () => {
  let srv: TestServer;
  let port: number;
  beforeAll(async () => {
    srv = await startTestServer({ env: { SECBOX_SERVER_MAX_IN_FLIGHT_PER_CLIENT: "2", SECBOX_SERVER_TRUST_PROXY: "true" } });
    port = Number(new URL(srv.url).port);
  });
  afterAll(() => srv.stop());

  test("counted by X-Real-IP: the proxy's other clients are served", async () => {
    const from = (ip: string) => `X-Real-IP: ${ip}\r\n`;
    const held = [await heldRequest(port, from("203.0.113.7")), await heldRequest(port, from("203.0.113.7"))];
    try {
      const refused = await firstRefusal(port, from("203.0.113.7"));
      expect(refused).toBeDefined();
      expect(headerOf(refused!, "retry-after")).toBe("1");
      expect(statusOf(await once(port, STATUS(from("203.0.113.8"))))).toBe(200);
      for (const h of held.splice(0)) expect(statusOf(await h.finish())).toBe(401);
      expect(statusOf(await once(port, STATUS(from("203.0.113.7"))))).toBe(200);
    } finally {
      for (const h of held) h.end();
    }
  });
});
