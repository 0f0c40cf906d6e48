// Issue 30 item 5 (supplement §27): a save compiles its scripts as they will run, without running them; a syntax
// error does not refuse the save but comes back as `warnings: ["<field>: SyntaxError: <message> (line L, column C)"]`
// with the line and column in the user's own source. Real server, real QuickJS pool.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "./harness";

let srv: TestServer;
let a: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  a = await srv.createUser();
});
afterAll(() => srv.stop());

const BROKEN = "return {statusCode: 200, body: }";
const BROKEN_WARNING = (field: string) => `${field}: SyntaxError: unexpected token in expression: '}' (line 1, column 32)`;
let seq = 0;
const name = (p: string) => `${p}-${++seq}`;

describe("library scripts", () => {
  test("a QuickJS script that does not compile is saved, with a warning naming content, line and column", async () => {
    const res = await a.client.post("/api/user/scripts", { name: name("s"), scriptType: "responder", content: BROKEN });
    expect(res.status).toBe(201);
    expect(res.json.warnings).toEqual([BROKEN_WARNING("content")]);
    const got = await a.client.get(`/api/user/scripts/${res.json.id}`);
    expect(got.json.content).toBe(BROKEN);
    expect(got.json.warnings).toBeUndefined();
  });

  test("valid scripts answer without warnings; every source form compiles (expression, await, body)", async () => {
    for (const content of ["({ body: 'x' })", "await Promise.resolve(1)", "const x = 1;\nreturn x;", "(async () => 1)();"]) {
      const res = await a.client.post("/api/user/scripts", { name: name("ok"), scriptType: "universal", content });
      expect(res.status).toBe(201);
      expect("warnings" in res.json).toBe(false);
    }
  });

  test("line and column are the user's own: leading blank lines and indentation count, the wrapper does not", async () => {
    const res = await a.client.post("/api/user/scripts", {
      name: name("lines"),
      scriptType: "api_extractor",
      content: "\n\n  const x = 1;\n  return x +* 2;\n",
    });
    expect(res.json.warnings).toEqual(["content: SyntaxError: unexpected token in expression: '*' (line 4, column 13)"]);
    // indentation on the first code line
    const first = await a.client.post("/api/user/scripts", { name: name("indent"), scriptType: "api_extractor", content: "    a b" });
    expect(first.json.warnings).toEqual(["content: SyntaxError: expecting ';' (line 1, column 7)"]);
  });

  test("a source that ends too early points just after its end, not into the wrapper", async () => {
    const res = await a.client.post("/api/user/scripts", { name: name("eof"), scriptType: "universal", content: "const v = 1;\nfoo(v" });
    expect(res.json.warnings).toEqual(["content: SyntaxError: expecting ',' (line 2, column 6)"]);
    const open = await a.client.post("/api/user/scripts", { name: name("eof"), scriptType: "universal", content: "return foo(" });
    expect(open.json.warnings).toEqual(["content: SyntaxError: unexpected end of script (line 1, column 12)"]);
  });

  test("update: a new content is checked (200 with warnings); an update without content is not", async () => {
    const created = await a.client.post("/api/user/scripts", { name: name("upd"), scriptType: "api_configurator", content: "return null" });
    expect(created.json.warnings).toBeUndefined();
    const broken = await a.client.put(`/api/user/scripts/${created.json.id}`, { content: "return [1, 2" });
    expect(broken.status).toBe(200);
    expect(broken.json.content).toBe("return [1, 2");
    expect(broken.json.warnings).toEqual(["content: SyntaxError: expecting ']' (line 1, column 13)"]);
    const renamed = await a.client.put(`/api/user/scripts/${created.json.id}`, { name: name("renamed") });
    expect(renamed.status).toBe(200);
    expect(renamed.json.warnings).toBeUndefined();
  });

  test("page extractors are checked as Chromium runs them: `context` is their parameter", async () => {
    // In QuickJS `context` is a global, so this compiles there; in the page it redeclares the extractor's parameter.
    const content = "let context = 1;\nreturn context";
    const page = await a.client.post("/api/user/scripts", { name: name("page"), scriptType: "page_extractor", content });
    expect(page.json.warnings).toEqual(["content: SyntaxError: Identifier 'context' has already been declared (line 1, column 5)"]);
    const quickjs = await a.client.post("/api/user/scripts", { name: name("qjs"), scriptType: "api_extractor", content });
    expect(quickjs.json.warnings).toBeUndefined();
  });

  test("compiling never runs the script, even one that closes its wrapper early", async () => {
    // Evaluated as a wrapper, this would run `null.x` (TypeError); compiled only, nothing runs and it parses.
    const res = await a.client.post("/api/user/scripts", { name: name("early"), scriptType: "responder", content: "0), (null.x), (0" });
    expect(res.status).toBe(201);
    expect(res.json.warnings).toBeUndefined();
  });
});

describe("responders", () => {
  test("create and update answer warnings for settings.script; the broken responder is saved and answers 500", async () => {
    const res = await a.client.post("/api/webhooks/responders", {
      name: name("r"),
      location: { pathType: "=", path: `/broken-${seq}` },
      method: "GET",
      settings: { requestsToTrack: 1, script: BROKEN },
    });
    expect(res.status).toBe(201);
    expect(res.json.warnings).toEqual([BROKEN_WARNING("settings.script")]);
    expect(res.json.settings.script).toBe(BROKEN);
    const hit = await fetch(`${srv.url}/api/webhooks/${a.handle}/broken-${seq}`);
    expect(hit.status).toBe(500);

    const fixed = await a.client.put(`/api/webhooks/responders/${res.json.id}`, { settings: { script: "return {statusCode: 201}" } });
    expect(fixed.status).toBe(200);
    expect(fixed.json.warnings).toBeUndefined();
    const again = await a.client.put(`/api/webhooks/responders/${res.json.id}`, { settings: { script: "\nreturn {statusCode: 201" } });
    expect(again.json.warnings).toEqual(["settings.script: SyntaxError: unexpected end of script (line 2, column 24)"]);
  });

  test("no script, no warnings member", async () => {
    const res = await a.client.post("/api/webhooks/responders", { name: name("plain"), location: { pathType: "=", path: `/plain-${seq}` } });
    expect(res.status).toBe(201);
    expect("warnings" in res.json).toBe(false);
  });
});

describe("trackers", () => {
  test("API tracker: create 201 with warnings per script field; update answers 200 {warnings} instead of 204", async () => {
    const res = await a.client.post("/api/web_scraping/api_trackers", {
      name: name("api"),
      target: { url: "https://example.com/feed", configurator: "return {requests: [}", extractor: "return 1" },
    });
    expect(res.status).toBe(201);
    expect(res.json.warnings).toEqual(["target.configurator: SyntaxError: unexpected token in expression: '}' (line 1, column 20)"]);

    const upd = await a.client.put(`/api/web_scraping/api_trackers/${res.json.id}`, {
      target: { url: "https://example.com/feed", configurator: "return null", extractor: "return (" },
    });
    expect(upd.status).toBe(200);
    expect(upd.json).toEqual({ warnings: ["target.extractor: SyntaxError: unexpected end of script (line 1, column 9)"] });
    const stored = await a.client.get(`/api/web_scraping/api_trackers/${res.json.id}`);
    expect(stored.json.target.extractor).toBe("return (");

    const clean = await a.client.put(`/api/web_scraping/api_trackers/${res.json.id}`, {
      target: { url: "https://example.com/feed", extractor: "return 2" },
    });
    expect(clean.status).toBe(204);
    const other = await a.client.put(`/api/web_scraping/api_trackers/${res.json.id}`, { enabled: false });
    expect(other.status).toBe(204);
  });

  test("page tracker: the extractor is parsed as page code (acorn), create and update", async () => {
    const res = await a.client.post("/api/web_scraping/page_trackers", {
      name: name("page"),
      target: { url: "https://example.com/", extractor: "return document.querySelector('h1').textContent +" },
    });
    expect(res.status).toBe(201);
    expect(res.json.warnings).toEqual(["target.extractor: SyntaxError: unexpected end of script (line 1, column 50)"]);
    const upd = await a.client.put(`/api/web_scraping/page_trackers/${res.json.id}`, {
      target: { url: "https://example.com/", extractor: "return document.title" },
    });
    expect(upd.status).toBe(204);
  });
});
