// API tracker scripts end to end in the real QuickJS sandbox (src/sandbox). Skipped when the pool is absent. The
// test builds its own pool (1 worker) and hands it to the trackers service.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer, type TestUser } from "../../../tests/harness";
import { startUpstream, type Upstream } from "../../../tests/fixtures/upstream";
import { createLogger } from "../../../platform/log";
import type { ScriptRunner } from "../../../sandbox/types";

const POOL_FILE = join(import.meta.dir, "../../../sandbox/pool.ts");
const hasPool = existsSync(POOL_FILE);
const BASE = "/api/web_scraping/api_trackers";

type Closable = ScriptRunner & { close(): Promise<void> };

async function buildRunner(): Promise<Closable> {
  const { ScriptPool } = (await import(POOL_FILE)) as typeof import("../../../sandbox/pool");
  const pool = new ScriptPool({ workers: 1, queueLimit: 100, allowPrivate: true, log: createLogger("error") });
  await pool.ready();
  return pool;
}

describe.skipIf(!hasPool)("API tracker scripts in the sandbox", () => {
  let up: Upstream;
  let srv: TestServer;
  let u: TestUser;
  let runner: Closable;

  beforeAll(async () => {
    up = startUpstream();
    srv = await startTestServer({
      env: {
        SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
        SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
        SECBOX_SUBSCRIPTIONS_TIERS_BASIC_SCRIPT_TIMEOUT_SEC: "1",
      },
    });
    runner = await buildRunner();
    srv.services.trackers.setScriptRunner(runner);
    u = await srv.createUser();
  });
  afterAll(async () => {
    await srv.stop();
    await runner.close();
    up.stop();
  });

  const create = async (target: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    (await u.client.post(BASE, { name: `s-${crypto.randomUUID().slice(0, 8)}`, target, ...extra })).json;
  const run = async (id: string) => (await u.client.post(`${BASE}/${id}/_history`, { refresh: true })).json;
  const lastLog = async (id: string) => (await u.client.get(`${BASE}/${id}/_logs`)).json[0];

  test("configurator adds a header from a secret; extractor picks a field; previousContent on the next run", async () => {
    await u.client.post("/api/user/secrets", { name: "TOKEN", value: "s3cret" });
    up.state.value = JSON.stringify([{ version: "1.4.0" }, { version: "1.3.0" }]);
    const t = await create(
      {
        requests: [{ url: `${up.url}/echo` }, { url: `${up.url}/value` }],
        configurator: `(() => ({ requests: context.requests.map((r, i) => i === 0 ? { ...r, headers: { ...r.headers, authorization: "Bearer " + context.params.secrets.TOKEN, "x-missing": String(context.params.secrets.NOPE) } } : r) }))()`,
        extractor: `(() => {
          const echo = JSON.parse(Sandbox.core.decode(context.responses[0].body));
          const list = JSON.parse(Sandbox.core.decode(context.responses[1].body));
          return { body: { version: list[0].version, auth: echo.headers.authorization, missing: echo.headers["x-missing"], prev: context.previousContent ?? null } };
        })()`,
      },
      { secrets: "all" },
    );
    const [rev] = await run(t.id);
    expect(rev.data).toEqual({ version: "1.4.0", auth: "Bearer s3cret", missing: "undefined", prev: null });
    const revs = await run(t.id);
    expect(revs[0].data.prev).toEqual({ version: "1.4.0", auth: "Bearer s3cret", missing: "undefined", prev: null });
  });

  test("with secrets none, reading a secret is undefined, never an error; no op_proxy_request in tracker scripts", async () => {
    const t = await create({
      url: `${up.url}/value`,
      extractor: `({ body: [typeof context.params.secrets.TOKEN, typeof Sandbox.core.ops?.op_proxy_request, typeof fetch] })`,
    });
    expect((await run(t.id))[0].data).toEqual(["undefined", "undefined", "undefined"]);
  });

  test("extractor result body conversions: bytes, strings, JSON values", async () => {
    up.state.value = "hello";
    const cases: [string, unknown][] = [
      ["({ body: context.responses[0].body })", "hello"],
      ["({ body: Sandbox.core.encode('bytes') })", "bytes"],
      ["({ body: [104, 105] })", "hi"],
      ["({ body: { n: 1 } })", { n: 1 }],
      ["({ body: 42 })", 42],
      ["null", "hello"],
    ];
    for (const [extractor, data] of cases) {
      const t = await create({ url: `${up.url}/value`, extractor });
      expect((await run(t.id))[0].data).toEqual(data);
    }
  });

  test("script failures fail the run in their phase", async () => {
    const syntax = await create({ url: `${up.url}/value`, extractor: "return {body: (" });
    await run(syntax.id);
    expect((await lastLog(syntax.id)).phases.map((p: any) => p.status)).toEqual(["skipped", "success", "failure", "skipped", "skipped", "skipped"]);
    const loop = await create({ url: `${up.url}/value`, configurator: "while (true) {}" });
    await run(loop.id);
    const log = await lastLog(loop.id);
    expect(log.phases[0]).toMatchObject({ phase: "configurator", status: "failure" });
    expect(log.error).toStartWith("Configurator failed:");
  });

  test("_debug shows each stage's params, result, logs and error", async () => {
    up.state.value = '{"a":1}';
    const res = await u.client.post(`${BASE}/_debug`, {
      target: {
        url: `${up.url}/value`,
        configurator: `console.log("cfg"); null`,
        extractor: `({ body: Sandbox.core.decode(context.responses[0].body).length })`,
      },
      secrets: "all",
    });
    expect(res.status).toBe(200);
    expect(res.json.configurator).toMatchObject({ result: null, error: null, params: { params: { secrets: { TOKEN: "********" } } } });
    expect(res.json.configurator.logs[0].message).toContain("cfg");
    expect(res.json.extractor).toMatchObject({ result: { body: 7 }, error: null });
    expect(res.json.result).toEqual({ body: 7 });
  });
});
