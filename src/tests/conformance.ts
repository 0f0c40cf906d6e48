// Conformance of the server to its own OpenAPI document (issue 19): every response an API test receives through
// ApiClient (harness.ts) is checked against /api-docs/openapi.json — the status must be declared for the
// operation, and the body must match that status's schema (JSON) or media type. A mismatch throws, naming the
// operation, the status and Ajv's errors, so the test that caused it fails and the document cannot drift.
//
// The check is stricter than the published document in one way: objects that list their properties accept no
// others (`additionalProperties: false` is added where the document leaves it open), so a response that leaks
// an undocumented field (an internal column, a secret value) fails too.
//
// Not checked: responder hits (a `Host` header naming a responder host, the path form /api/webhooks/<handle>/…),
// non-API paths, and unknown routes that answer the documented 404 NOT_FOUND.
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";

type Json = Record<string, any>;

interface Operation {
  path: string;
  method: string;
  regex: RegExp;
  literal: number;
  op: Json;
}

export interface Conformance {
  check(method: string, url: string, status: number, contentType: string, text: string): void;
}

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Adds `additionalProperties: false` to every object schema that lists properties and says nothing else. */
export function strictify(node: any, inAllOf = false): any {
  if (Array.isArray(node)) return node.map((n) => strictify(n, inAllOf));
  if (!isObj(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "allOf") out[k] = (v as any[]).map((s) => strictify(s, true));
    else if (k === "properties") out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, strictify(s)]));
    else if (k === "example" || k === "examples") out[k] = v;
    else out[k] = strictify(v);
  }
  if (!inAllOf && isObj(out.properties) && !("additionalProperties" in out) && !("patternProperties" in out) && !("$ref" in out))
    out.additionalProperties = false;
  return out;
}

const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

export function createConformance(doc: Json): Conformance {
  const strict = strictify(doc);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "openapi.json", components: strict.components, paths: strict.paths });
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries<Json>(strict.paths)) {
    const regex = new RegExp("^" + path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "$");
    for (const [method, op] of Object.entries<Json>(methods))
      ops.push({ path, method: method.toUpperCase(), regex, literal: path.replace(/\{[^}]+\}/g, "").length, op });
  }
  // Literal segments win over templates (/responders/_stats before /responders/{responder_id}).
  ops.sort((a, b) => b.literal - a.literal);
  const validators = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    let v = validators.get(pointer);
    if (!v) {
      v = ajv.compile({ $ref: `openapi.json#${pointer}` });
      validators.set(pointer, v);
    }
    return v;
  };

  return {
    check(method, url, status, contentType, text) {
      const u = new URL(url);
      let path = u.pathname;
      if (!path.startsWith("/api/")) return;
      if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
      // The responder path form /api/webhooks/<handle>[/…] is a responder hit, not an API call.
      if (/^\/api\/webhooks\/(?!responders(\/|$))/.test(path)) return;
      const m = method.toUpperCase();
      const found = ops.find((o) => o.method === m && o.regex.test(path));
      const where = `${m} ${path} → ${status}`;
      if (!found) {
        if (status === 404 && safeJson(text)?.code === "NOT_FOUND") return;
        throw new Error(`OpenAPI conformance: ${where}: no such operation in the document`);
      }
      const label = `${found.method} ${found.path} → ${status}`;
      const response = found.op.responses?.[String(status)];
      if (!response)
        throw new Error(
          `OpenAPI conformance: ${label}: status not declared (declared: ${Object.keys(found.op.responses ?? {}).join(", ")}); body: ${text.slice(0, 300)}`,
        );
      const content: Json | undefined = response.content;
      if (!content) {
        if (text !== "") throw new Error(`OpenAPI conformance: ${label}: declared without a body, got ${text.slice(0, 200)}`);
        return;
      }
      const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
      const declared = Object.keys(content);
      if (!declared.includes(mediaType))
        throw new Error(`OpenAPI conformance: ${label}: content type ${mediaType || "(none)"}, declared ${declared.join(", ")}`);
      if (!content[mediaType].schema || mediaType !== "application/json") return;
      const body = safeJson(text, undefined);
      if (body === undefined) throw new Error(`OpenAPI conformance: ${label}: body is not JSON: ${text.slice(0, 200)}`);
      const pointer = `/paths/${escapePointer(found.path)}/${found.method.toLowerCase()}/responses/${status}/content/${escapePointer(mediaType)}/schema`;
      const validate = validator(pointer);
      if (!validate(body)) {
        const errors = (validate.errors ?? [])
          .slice(0, 8)
          .map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
        throw new Error(`OpenAPI conformance: ${label}: body does not match the schema:\n  ${errors.join("\n  ")}\nbody: ${text.slice(0, 500)}`);
      }
    },
  };
}

function safeJson(text: string, fallback: any = {}): any {
  try {
    return text === "" ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** One checker per process, built from the first server's document (every test server serves the same routes). */
let shared: Promise<Conformance> | undefined;
export function conformanceFor(baseUrl: string): Promise<Conformance> {
  shared ??= fetch(`${baseUrl}/api-docs/openapi.json`)
    .then(async (res) => createConformance((await res.json()) as Json))
    .catch((err) => {
      shared = undefined;
      throw err;
    });
  return shared;
}
