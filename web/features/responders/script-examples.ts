// Script examples the responder editor inserts (supplement §11.5–§11.9: `context`, the result object,
// op_proxy_request, Secbox.kv, Secbox.crypto). Each is a complete script that works as inserted.
import type { ScriptExample } from "../scripts/script-example";

export const SCRIPT_EXAMPLES: (ScriptExample & { id: string; hint: string })[] = [
  {
    id: "echo",
    label: "Echo the request",
    hint: "Answers with the method, path, query, headers and body it received, as JSON.",
    source: `// Echo: answer with what arrived, as JSON.
const text = Sandbox.core.decode(context.body);
let json;
try { json = JSON.parse(text); } catch { json = undefined; }
return {
  statusCode: 200,
  headers: { "content-type": "application/json" },
  body: {
    method: context.method,
    path: context.path,
    query: context.query,
    headers: context.headers,
    clientAddress: context.clientAddress ?? null,
    body: json ?? text,
  },
};
`,
  },
  {
    id: "json-api",
    label: "JSON API with routing on the path",
    hint: "A small REST mock: GET /items, GET /items/<id>, POST /items; 404 and 405 otherwise.",
    source: `// A small JSON API: routes on method and path (use path type * so sub-paths reach it).
const items = { "1": { id: 1, name: "first" }, "2": { id: 2, name: "second" } };
const json = (statusCode, body) => ({ statusCode, headers: { "content-type": "application/json" }, body });
const parts = context.path.split("/").filter(Boolean); // e.g. ["items", "2"]
const id = parts[parts.length - 1];

if (context.path.endsWith("/items")) {
  if (context.method === "GET") return json(200, Object.values(items));
  if (context.method === "POST") {
    const input = JSON.parse(Sandbox.core.decode(context.body) || "{}");
    return json(201, { id: 3, ...input });
  }
  return json(405, { error: "method not allowed" });
}
if (parts.length >= 2 && parts[parts.length - 2] === "items") {
  return items[id] ? json(200, items[id]) : json(404, { error: \`no item \${id}\` });
}
return json(404, { error: "not found" });
`,
  },
  {
    id: "basic-auth",
    label: "HTTP Basic check (401 + WWW-Authenticate)",
    hint: "Lets a request through only with the right user and password (a secret); else 401 with a challenge.",
    source: `// HTTP Basic authentication: the password is the secret BASIC_PASSWORD (give this responder access to it).
const expected = "Basic " + btoa("admin:" + (context.secrets.BASIC_PASSWORD ?? ""));
if (context.headers.authorization !== expected) {
  return {
    statusCode: 401,
    headers: { "www-authenticate": 'Basic realm="secbox", charset="UTF-8"', "content-type": "text/plain" },
    body: "Authentication required",
  };
}
return { statusCode: 200, headers: { "content-type": "text/plain" }, body: "Welcome, admin" };
`,
  },
  {
    id: "proxy",
    label: "Proxy to an upstream",
    hint: "Forwards the request to another server and answers with its response (public addresses only).",
    source: `// Proxy: forward the request to an upstream and return its response unchanged.
const upstream = "https://api.example.com"; // your server; public addresses only (private ones are refused)
const headers = { ...context.headers };
delete headers.host;
const response = await Sandbox.core.ops.op_proxy_request({
  url: upstream + context.path + (context.rawQuery ? "?" + context.rawQuery : ""),
  method: context.method,
  headers,
  body: context.method === "GET" || context.method === "HEAD" ? undefined : context.body,
  timeout: 10000,
});
return response; // {statusCode, headers, body}
`,
  },
  {
    id: "kv-counter",
    label: "KV counter",
    hint: "Counts hits in the responder's key-value store and answers with the count.",
    source: `// A hit counter in the responder's key-value store (kept across requests; deleted with the responder).
const count = Number((await Secbox.kv.get("hits")) ?? "0") + 1;
await Secbox.kv.set("hits", String(count));
return { statusCode: 200, headers: { "content-type": "application/json" }, body: { hits: count } };
`,
  },
  {
    id: "seal",
    label: "Sealed-box seal",
    hint: "Encrypts the request body to an X25519 public key (libsodium crypto_box_seal); only the key's owner can open it.",
    source: `// Seal the request body to a recipient's X25519 public key (base64url, 32 bytes): libsodium crypto_box_seal.
// Put your own public key here; the output opens with crypto_box_seal_open and the matching private key.
const recipientPublicKey = "3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08";
const sealed = await Secbox.crypto.seal(recipientPublicKey, context.body);
return { statusCode: 200, headers: { "content-type": "application/json" }, body: { sealed } };
`,
  },
];
