// The responder editor's script examples (web/features/responders/script-examples.ts) run as inserted: each one
// through "Try it" (POST …/_test) on a real server with the real QuickJS sandbox. The proxy example is pointed at
// an upstream on loopback (private targets allowed on this server only); the sealed box opens with libsodium.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { startTestServer, type TestServer, type TestUser } from "../../src/tests/harness";
import { SCRIPT_EXAMPLES } from "../../web/features/responders/script-examples";

let srv: TestServer;
let user: TestUser;
let upstream: ReturnType<typeof Bun.serve>;
const BASE = "/api/webhooks/responders";

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } });
  user = await srv.createUser();
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (r) => Response.json({ upstream: true, method: r.method, path: new URL(r.url).pathname, body: await r.text() }, { status: 203 }),
  });
});
afterAll(async () => {
  upstream?.stop(true);
  await srv?.stop();
});

const source = (id: string) => SCRIPT_EXAMPLES.find((e) => e.id === id)!.source;
const text = (b64: string | undefined) => Buffer.from(b64 ?? "", "base64").toString("utf8");
let seq = 0;

async function responder(script: string, settings: Record<string, unknown> = {}) {
  const res = await user.client.post(BASE, {
    name: `example-${++seq}`,
    location: { pathType: "*", path: `/ex${seq}` },
    settings: { script, ...settings },
  });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: string; location: { path: string } };
}

async function tryIt(r: { id: string }, body: Record<string, unknown>) {
  const res = await user.client.post(`${BASE}/${r.id}/_test`, body);
  expect(res.status, res.text).toBe(200);
  return res.json.response as { statusCode: number; headers: string[][]; body?: string };
}

describe("script examples", () => {
  test("there are the six the issue asks for", () => {
    expect(SCRIPT_EXAMPLES.map((e) => e.id)).toEqual(["echo", "json-api", "basic-auth", "proxy", "kv-counter", "seal"]);
  });

  test("echo answers with what arrived", async () => {
    const r = await responder(source("echo"));
    const res = await tryIt(r, {
      method: "POST",
      path: `${r.location.path}/a?x=1`,
      headers: [["content-type", "application/json"]],
      body: '{"n":1}',
    });
    expect(res.statusCode).toBe(200);
    const out = JSON.parse(text(res.body));
    expect([out.method, out.path, out.query, out.body, out.headers["content-type"]]).toEqual([
      "POST",
      `${r.location.path}/a`,
      { x: "1" },
      { n: 1 },
      "application/json",
    ]);
  });

  test("JSON API routes on method and path", async () => {
    const r = await responder(source("json-api"));
    const p = r.location.path;
    expect(JSON.parse(text((await tryIt(r, { method: "GET", path: `${p}/items` })).body))).toHaveLength(2);
    const one = await tryIt(r, { method: "GET", path: `${p}/items/2` });
    expect([one.statusCode, JSON.parse(text(one.body)).name]).toEqual([200, "second"]);
    expect((await tryIt(r, { method: "GET", path: `${p}/items/9` })).statusCode).toBe(404);
    const made = await tryIt(r, { method: "POST", path: `${p}/items`, body: '{"name":"third"}' });
    expect([made.statusCode, JSON.parse(text(made.body))]).toEqual([201, { id: 3, name: "third" }]);
    expect((await tryIt(r, { method: "DELETE", path: `${p}/items` })).statusCode).toBe(405);
  });

  test("HTTP Basic: 401 with WWW-Authenticate without the password, 200 with it", async () => {
    const secret = (await user.client.post("/api/user/secrets", { name: "BASIC_PASSWORD", value: "pa55" })).json;
    const r = await responder(source("basic-auth"), { secrets: { selected: [secret.id] } });
    const denied = await tryIt(r, { method: "GET" });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers).toContainEqual(["www-authenticate", 'Basic realm="secbox", charset="UTF-8"']);
    expect((await tryIt(r, { method: "GET", headers: [["authorization", `Basic ${btoa("admin:wrong")}`]] })).statusCode).toBe(401);
    const ok = await tryIt(r, { method: "GET", headers: [["authorization", `Basic ${btoa("admin:pa55")}`]] });
    expect([ok.statusCode, text(ok.body)]).toEqual([200, "Welcome, admin"]);
  });

  test("proxy forwards to the upstream and answers with its response", async () => {
    const script = source("proxy").replace("https://api.example.com", `http://127.0.0.1:${upstream.port}`);
    expect(script).not.toBe(source("proxy"));
    const r = await responder(script);
    const res = await tryIt(r, { method: "POST", path: `${r.location.path}/up?q=1`, body: "hello" });
    expect(res.statusCode).toBe(203);
    expect(JSON.parse(text(res.body))).toEqual({ upstream: true, method: "POST", path: `${r.location.path}/up`, body: "hello" });
  });

  test("KV counter counts", async () => {
    const r = await responder(source("kv-counter"));
    const counts = [];
    for (let i = 0; i < 3; i++) counts.push(JSON.parse(text((await tryIt(r, {})).body)).hits);
    expect(counts).toEqual([1, 2, 3]);
  });

  test("sealed box opens with the recipient's private key", async () => {
    await sodium.ready;
    const kp = sodium.crypto_box_keypair();
    const pk = Buffer.from(kp.publicKey).toString("base64url");
    const script = source("seal").replace(/const recipientPublicKey = "[^"]+"/, `const recipientPublicKey = "${pk}"`);
    expect(script).toContain(pk);
    const r = await responder(script);
    const res = await tryIt(r, { method: "POST", body: "top secret" });
    const { sealed } = JSON.parse(text(res.body));
    expect(sodium.to_string(sodium.crypto_box_seal_open(Buffer.from(sealed, "base64url"), kp.publicKey, kp.privateKey))).toBe("top secret");
    // the example as shipped runs too (its placeholder key is a valid one)
    expect((await tryIt(await responder(source("seal")), { method: "POST", body: "x" })).statusCode).toBe(200);
  });
});
