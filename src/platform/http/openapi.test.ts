// The OpenAPI document as a contract (issue 19): valid OAS 3.1 / JSON Schema 2020-12 (Ajv compiles every schema),
// both independent linters report 0 errors, every operation is typed (bodies, ids, integers, responses for every
// status, named schemas), security is per operation, and the docs page's examples work against a real server.
// (That every response matches the document is checked on every API test: src/tests/conformance.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { lintDocument } from "../../../scripts/contract/lint";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

let srv: TestServer;
let user: TestUser;
let doc: any;
beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SERVER_PUBLIC_URL: "https://secbox.example.test" } });
  user = await srv.createUser();
  doc = (await srv.anon.get("/api-docs/openapi.json")).json;
});
afterAll(() => srv.stop());

const operations = () =>
  Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

/** Every subschema of a value, depth first. */
function* schemas(node: any): Generator<any> {
  if (Array.isArray(node)) for (const n of node) yield* schemas(n);
  else if (node && typeof node === "object") {
    yield node;
    for (const [k, v] of Object.entries(node)) if (k !== "example" && k !== "examples") yield* schemas(v);
  }
}

describe("OpenAPI document", () => {
  test("both linters report 0 errors (Redocly recommended, Spectral spectral:oas), offline", async () => {
    for (const r of await lintDocument(doc)) expect([r.tool, r.ok, r.ok ? "" : r.output]).toEqual([r.tool, true, ""]);
  }, 120_000);

  test("valid JSON Schema 2020-12: Ajv compiles every schema of the document", () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: "openapi.json", components: doc.components });
    for (const name of Object.keys(doc.components.schemas))
      expect(() => ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` })).not.toThrow();
    // No pre-3.1 forms: tuples are prefixItems, integers are integers (not "string or integer").
    const all = [...schemas(doc)];
    expect(all.filter((s) => "additionalItems" in s || Array.isArray(s.items))).toEqual([]);
    expect(all.filter((s) => Array.isArray(s.anyOf) && s.anyOf.some((a: any) => a.type === "string" && a.format === "integer"))).toEqual([]);
  });

  test("servers come from server.public_url; the spec's named schemas are listed and referenced", () => {
    expect(doc.servers).toEqual([{ url: "https://secbox.example.test", description: "server.public_url" }]);
    for (const name of [
      "RespondersCreateParams",
      "Responder",
      "Page_Responder",
      "ApiTrackerCreateParams",
      "CertificateTemplateGetResponse",
      "UserApiKey",
      "ApiKeyCreateResponse",
      "Status",
      "Error",
    ])
      expect(doc.components.schemas[name]).toBeDefined();
    const refs = new Set([...schemas(doc.paths)].filter((s) => typeof s.$ref === "string").map((s) => s.$ref));
    expect(refs).toContain("#/components/schemas/RespondersCreateParams");
    // the created responder plus its script's syntax warnings (§27)
    expect(doc.paths["/api/webhooks/responders"].post.responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ResponderSaved",
    });
    expect(doc.paths["/api/webhooks/responders/{responder_id}"].get.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Responder",
    });
  });

  test("every operation: typed bodies with required members, uuid path ids, a response for every status, errors as Error with their codes", () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(104);
    for (const { path, method, op } of ops) {
      const label = `${method} ${path}`;
      expect([label, Object.keys(op.responses).some((s) => s.startsWith("2"))]).toEqual([label, true]);
      for (const p of op.parameters ?? []) if (p.in === "path") expect([label, p.schema]).toEqual([label, { type: "string", format: "uuid" }]);
      for (const [status, res] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const schema = res.content["application/json"].schema;
        expect([label, status, schema.allOf[0]]).toEqual([label, status, { $ref: "#/components/schemas/Error" }]);
        expect(schema.allOf[1].properties.code.enum.length).toBeGreaterThan(0);
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      if (body) {
        const resolved = body.$ref ? doc.components.schemas[body.$ref.split("/").pop()] : body;
        // A typed object (no member left untyped) whose required members are marked.
        expect([label, resolved.type]).toEqual([label, "object"]);
        for (const [name, member] of Object.entries<any>(resolved.properties))
          expect([label, name, Object.keys(member).length > 0]).toEqual([label, name, true]);
      }
    }
    const tags = doc.components.schemas.TagCreateParams;
    expect(tags.required).toEqual(["name"]);
    const responder = doc.components.schemas.RespondersCreateParams;
    expect(responder.required).toEqual(["name", "location"]);
    expect(responder.properties.method.enum).toContain("ANY");
    const page = doc.paths["/api/user/tags"].get.parameters.find((p: any) => p.name === "page");
    expect(page.schema.type).toBe("integer");
    expect(doc.paths["/api/user/tags"].get.parameters.find((p: any) => p.name === "order").schema.enum).toEqual(["asc", "desc"]);
    expect(doc.components.schemas.UserTag.properties.createdAt).toEqual({ description: "unix seconds", type: "integer" });
    // Tuples: [name, value] pairs.
    const header = doc.components.schemas.Responder.properties.settings.properties.headers.items;
    expect(header.prefixItems.map((s: any) => s.type)).toEqual(["string", "string"]);
    // Error codes per operation: e.g. creating a responder.
    const create = doc.paths["/api/webhooks/responders"].post.responses;
    expect(create["409"].content["application/json"].schema.allOf[1].properties.code.enum).toEqual(["CONFLICT", "DUPLICATE_NAME"]);
    expect(create["401"].content["application/json"].schema.allOf[1].properties.code.enum).toEqual(["UNAUTHENTICATED"]);
  });

  test("security per operation: public, optional, user, API-key management, operator, shared", () => {
    const sec = (path: string, method: string) => doc.paths[path][method].security;
    const names = (list: any[]) => list.map((s) => Object.keys(s)[0] ?? "(none)");
    expect(sec("/api/status", "get")).toEqual([]);
    expect(sec("/api/notifications/unsubscribe", "get")).toEqual([]);
    expect(sec("/api/notifications/unsubscribe", "post")).toEqual([]);
    expect(names(sec("/api/send_message", "post"))).toEqual(["(none)", "session", "apiKey", "jwt"]);
    expect(names(sec("/api/user/tags", "get"))).toEqual(["session", "apiKey", "jwt"]);
    for (const [path, ops] of Object.entries<any>(doc.paths))
      if (path.startsWith("/api/user/api_keys")) for (const op of Object.values<any>(ops)) expect(names(op.security)).toEqual(["session", "jwt"]);
    expect(names(sec("/api/status", "post"))).toEqual(["operatorSession", "operatorJwt"]);
    expect(names(sec("/api/users/_clone", "post"))).toEqual(["operatorSession", "operatorJwt"]);
    for (const [path, method] of [
      ["/api/certificates/templates/{template_id}", "get"],
      ["/api/certificates/templates/{template_id}/_generate", "post"],
      ["/api/web_security/csp/{policy_id}", "get"],
      ["/api/web_security/csp/{policy_id}/_serialize", "post"],
    ] as const)
      expect(names(sec(path, method))).toEqual(["shareId", "session", "apiKey", "jwt"]);
    // The share header appears only on the shared operations.
    const shared = operations().filter(({ op }) => op.security.some((s: any) => "shareId" in s));
    expect(shared.length).toBe(4);
    expect(doc.components.securitySchemes.shareId).toMatchObject({ type: "apiKey", in: "header", name: "X-User-Share-ID" });
  });

  test("the docs page's examples are valid against their schemas, and the main create examples work", async () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: "openapi.json", components: doc.components, paths: doc.paths });
    const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");
    let examples = 0;
    for (const { path, method, op } of operations()) {
      const media = op.requestBody?.content?.["application/json"];
      if (media?.example === undefined) continue;
      examples++;
      const validate = ajv.compile({ $ref: `openapi.json#/paths/${esc(path)}/${method.toLowerCase()}/requestBody/content/application~1json/schema` });
      expect([`${method} ${path}`, validate(media.example), validate.errors ?? null]).toEqual([`${method} ${path}`, true, null]);
    }
    expect(examples).toBeGreaterThanOrEqual(20);
    // "Try it out" on the main create operations (no outbound network needed).
    const creates = [
      "/api/user/tags",
      "/api/user/secrets",
      "/api/user/scripts",
      "/api/webhooks/responders",
      "/api/certificates/private_keys",
      "/api/certificates/templates",
      "/api/web_security/csp",
      "/api/web_scraping/api_trackers",
      "/api/web_scraping/page_trackers",
    ];
    for (const path of creates) {
      const res = await user.client.post(path, doc.paths[path].post.requestBody.content["application/json"].example);
      expect([path, res.status, res.status === 201 ? "" : res.text]).toEqual([path, 201, ""]);
    }
  });
});
