// The OpenAPI 3.1 document (issue 19), built from the app's route table: every `/api` route carries its contract
// (`detail: op({...})`, platform/http/contract.ts) and its auth level (the auth macro adds it). From them come the
// typed request body and query, the success responses, one error response per status with the operation's codes
// (the shared `Error` schema narrowed to them), the path ids (`format: uuid`, a malformed one is a 404) and the
// security requirements. Schemas that carry a `$id` (contract.ts `Named`) are listed once under
// `components.schemas` and referenced with `$ref`. TypeBox's pre-2020 forms are rewritten for JSON Schema 2020-12:
// tuples become `prefixItems` (closed with `items: {not: {}}`), string-keyed records `additionalProperties`, unions of string literals `enum`.
import type { ErrorCode } from "../core/errors";
import { AUTH_KEY, CONTRACT_KEY, isMedia, type RouteContract } from "./contract";
import { addsData } from "../storage/http";

export const OPENAPI_VERSION = "3.1.1";

export interface DocumentOptions {
  title: string;
  version: string;
  description: string;
  /** `server.public_url`: the document's one server. */
  publicUrl: string;
  /** `security.session_cookie`. */
  sessionCookie: string;
  tags: { name: string; description: string }[];
}

export interface RouteLike {
  method: string;
  path: string;
  hooks?: { detail?: Record<string, unknown> };
}

type Json = Record<string, any>;

/** Every error code (supplement §2), the `code` enum of the shared `Error` schema. */
export const ERROR_CODES: readonly ErrorCode[] = [
  "INVALID_JSON",
  "BAD_CONTENT_TYPE",
  "INVALID_INPUT",
  "LIMIT_REACHED",
  "TARGET_NOT_ALLOWED",
  "UPSTREAM_FAILED",
  "INVALID_SCHEDULE",
  "SCHEDULE_TOO_FREQUENT",
  "BAD_PASSPHRASE",
  "ALGORITHM_UNAVAILABLE",
  "BAD_PASSWORD",
  "WEAK_PASSWORD",
  "INVALID_TOKEN",
  "EMAIL_TAKEN",
  "HANDLE_TAKEN",
  "VERIFICATION_FAILED",
  "COOLDOWN",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_OPERATOR",
  "API_KEY_NOT_ALLOWED",
  "NO_USER",
  "SIGNUP_CLOSED",
  "NOT_ACTIVATED",
  "SIGNUP_RESERVED",
  "MAIL_NOT_CONFIGURED",
  "NOT_FOUND",
  "DUPLICATE_NAME",
  "CONFLICT",
  "PAYLOAD_TOO_LARGE",
  "RATE_LIMITED",
  "INSUFFICIENT_STORAGE",
  "INTERNAL",
  "PAYLOAD_TOO_LARGE",
  "RATE_LIMITED",
  "UNAVAILABLE",
  "INTERNAL",
];

const ERROR_SCHEMA = {
  type: "object",
  description: "Every API error (supplement §2). `message` is for people; switch on `code`.",
  required: ["message", "code"],
  properties: {
    message: { type: "string", description: "human-readable; names the field when there is one (`settings.statusCode: …`)" },
    code: { type: "string", enum: [...ERROR_CODES], description: "stable token: what clients test" },
  },
};

/** Who may call, per auth level (platform/auth/plugin.ts); `[]` = no credentials needed. */
const SECURITY: Record<string, Json[]> = {
  public: [],
  optional: [{}, { session: [] }, { apiKey: [] }, { jwt: [] }],
  user: [{ session: [] }, { apiKey: [] }, { jwt: [] }],
  userNoApiKey: [{ session: [] }, { jwt: [] }],
  operator: [{ operatorSession: [] }, { operatorJwt: [] }],
  shared: [{ shareId: [] }, { session: [] }, { apiKey: [] }, { jwt: [] }],
};

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  201: "Created",
  204: "No content",
  400: "Invalid request (body, parameters or a rule of the operation)",
  401: "Missing, invalid or expired credentials",
  403: "Credentials not allowed here",
  404: "Not found (unknown, another user's or malformed id)",
  409: "Name or location already in use",
  413: "Request body too large",
  429: "Too many requests (see Retry-After)",
  500: "Internal error",
  507: "The server is low on disk space (server.min_free_disk_mib): writes that add data are refused until space is freed",
  503: "Busy: the work queue is full, or the work took too long (see Retry-After)",
};

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The error codes a level implies: 401 and the 403s of supplement §3.1 (cross-site only on writes). */
function authErrors(level: string, method: string): Partial<Record<number, ErrorCode[]>> {
  const crossSite: ErrorCode[] = WRITE_METHODS.has(method) ? ["FORBIDDEN"] : [];
  switch (level) {
    case "user":
      return { 401: ["UNAUTHENTICATED"], 403: ["NO_USER", ...crossSite] };
    case "userNoApiKey":
      return { 401: ["UNAUTHENTICATED"], 403: ["API_KEY_NOT_ALLOWED", "NO_USER", ...crossSite] };
    case "operator":
      return { 401: ["UNAUTHENTICATED"], 403: ["NOT_OPERATOR", ...crossSite] };
    default:
      return {};
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

class SchemaRegistry {
  readonly schemas: Record<string, Json> = { Error: ERROR_SCHEMA };
  private readonly texts = new Map<string, string>([["Error", JSON.stringify(ERROR_SCHEMA)]]);

  /** A TypeBox schema as 2020-12 JSON Schema, named subschemas replaced by `$ref`s. */
  convert(schema: unknown): Json {
    return this.walk(JSON.parse(JSON.stringify(schema)));
  }

  private walk(node: any, root = false): any {
    if (Array.isArray(node)) return node.map((n) => this.walk(n));
    if (!isObj(node)) return node;
    if (typeof node.$id === "string" && !root) return this.register(node);
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === "$id") continue;
      out[k] = k === "properties" || k === "patternProperties" || k === "$defs" ? mapValues(v, (s) => this.walk(s)) : this.walk(v);
    }
    // Tuples: `items: [...]` + `additionalItems` (draft 7) → `prefixItems` + `items: false`.
    if (Array.isArray(out.items)) {
      out.prefixItems = out.items;
      // `{not: {}}` is `false` spelled as a schema (some linters insist that `items` be an object).
      out.items = out.additionalItems === false || out.additionalItems === undefined ? { not: {} } : out.additionalItems;
      delete out.additionalItems;
    }
    // T.Record(T.String(), X) → additionalProperties X.
    if (isObj(out.patternProperties)) {
      const keys = Object.keys(out.patternProperties);
      if (keys.length === 1 && (keys[0] === "^(.*)$" || keys[0] === "^.*$")) {
        out.additionalProperties = out.patternProperties[keys[0]!];
        delete out.patternProperties;
      }
    }
    // A union of string literals → enum.
    const alts = out.anyOf;
    if (
      Array.isArray(alts) &&
      alts.length > 0 &&
      alts.every((a) => isObj(a) && typeof a.const === "string" && Object.keys(a).every((k) => k === "const" || k === "type"))
    ) {
      delete out.anyOf;
      out.type = "string";
      out.enum = alts.map((a) => a.const);
    }
    return out;
  }

  private register(node: Json): Json {
    const name = node.$id as string;
    const converted = this.walk(node, true);
    const text = JSON.stringify(converted);
    const known = this.texts.get(name);
    if (known === undefined) {
      this.texts.set(name, text);
      this.schemas[name] = converted;
    } else if (known !== text) throw new Error(`OpenAPI: two different schemas are named ${name}`);
    return { $ref: `#/components/schemas/${name}` };
  }
}

const mapValues = (obj: Json, fn: (v: any) => any) => Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fn(v)]));

// ---------------------------------------------------------------------------------------------------------------
// Operations

const PARAM_DESCRIPTIONS: Record<string, string> = {
  user_id: "a user's id",
  api_key_id: "an API key's id",
};

function operationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((s) => s !== "" && s !== "api")
    .map((s) => (s.startsWith(":") ? `by_${s.slice(1)}` : s))
    .join("_")
    .split(/[_\-]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

function errorResponse(status: number, codes: ErrorCode[]): Json {
  return {
    description: STATUS_TEXT[status] ?? "Error",
    content: {
      "application/json": {
        schema: {
          allOf: [
            { $ref: "#/components/schemas/Error" },
            { type: "object", required: ["code"], properties: { code: { type: "string", enum: codes } } },
          ],
        },
      },
    },
  };
}

function buildOperation(route: RouteLike, contract: RouteContract, level: string, reg: SchemaRegistry): Json {
  const method = route.method.toUpperCase();
  const errors = new Map<number, Set<ErrorCode>>();
  const add = (status: number, codes: readonly ErrorCode[] = []) => {
    const set = errors.get(status) ?? new Set<ErrorCode>();
    for (const c of codes) set.add(c);
    errors.set(status, set);
  };

  const parameters: Json[] = [];
  for (const seg of route.path.split("/")) {
    if (!seg.startsWith(":")) continue;
    const name = seg.slice(1);
    parameters.push({
      name,
      in: "path",
      required: true,
      description: PARAM_DESCRIPTIONS[name] ?? `the ${name.replace(/_id$/, "").replace(/_/g, " ")}'s id (a malformed id is a 404)`,
      schema: { type: "string", format: "uuid" },
    });
    add(404, ["NOT_FOUND"]);
  }
  if (contract.query) {
    const required = new Set<string>(contract.query.required ?? []);
    for (const [name, prop] of Object.entries(contract.query.properties)) {
      const schema = reg.convert(prop);
      const description = schema.description;
      delete schema.description;
      parameters.push({ name, in: "query", required: required.has(name), ...(description ? { description } : {}), schema });
    }
    add(400, ["INVALID_INPUT"]);
  }

  const out: Json = { operationId: operationId(method, route.path), tags: contract.tags, summary: contract.summary };
  if (contract.description) out.description = contract.description;
  if (parameters.length > 0) out.parameters = parameters;

  if (contract.body) {
    const schema = reg.convert(contract.body);
    const mediaType: Json = { schema };
    if (contract.example !== undefined) mediaType.example = contract.example;
    const content: Json = { "application/json": mediaType };
    if (contract.form) {
      content["application/x-www-form-urlencoded"] = { schema };
      content["multipart/form-data"] = { schema };
    }
    out.requestBody = { required: (contract.body.required ?? []).length > 0, content };
  }
  // A write decodes whatever body comes (an operation without parameters accepts none, or `{}`): bad JSON, another
  // content type or JSON nested too deeply is a 400 there too.
  if (contract.body || WRITE_METHODS.has(method)) add(400, ["INVALID_JSON", "BAD_CONTENT_TYPE", "INVALID_INPUT"]);
  // Any request announcing a body above the route's limit (Content-Length) is refused before routing work.
  add(413, ["PAYLOAD_TOO_LARGE"]);
  // The free-disk guard (platform/storage/http.ts) answers writes that add data on a full disk.
  if (addsData(method, route.path)) add(507, ["INSUFFICIENT_STORAGE"]);

  const responses: Json = {};
  for (const [status, spec] of Object.entries(contract.responses)) {
    const description = STATUS_TEXT[Number(status)] ?? "OK";
    if (spec === null) responses[status] = { description };
    else if (isMedia(spec)) {
      responses[status] = {
        description: spec.description ?? description,
        ...(spec.headers
          ? { headers: mapValues(spec.headers, (h) => ({ description: h.description, schema: h.schema ?? { type: "string" } })) }
          : {}),
        content: { [spec.mediaType]: spec.schema ? { schema: reg.convert(spec.schema) } : {} },
      };
    } else responses[status] = { description, content: { "application/json": { schema: reg.convert(spec) } } };
  }
  for (const [status, codes] of Object.entries(authErrors(level, method))) add(Number(status), codes);
  for (const [status, codes] of Object.entries(contract.errors ?? {})) add(Number(status), codes);
  for (const status of [...errors.keys()].sort((a, b) => a - b)) responses[String(status)] = errorResponse(status, [...errors.get(status)!].sort());
  out.responses = responses;
  out.security = SECURITY[level] ?? [];
  return out;
}

/** The document for a route table. Throws when an `/api` route has no contract: every operation is described. */
export function buildOpenApi(routes: readonly RouteLike[], opts: DocumentOptions): Json {
  const reg = new SchemaRegistry();
  const paths: Json = {};
  for (const route of routes) {
    if (!route.path.startsWith("/api/") || route.method === "OPTIONS") continue;
    const detail = route.hooks?.detail ?? {};
    if ((detail as { hide?: boolean }).hide) continue;
    const contract = detail[CONTRACT_KEY] as RouteContract | undefined;
    if (!contract) throw new Error(`OpenAPI: ${route.method} ${route.path} declares no contract (detail: op({...}))`);
    const level = contract.optionalAuth ? "optional" : String(detail[AUTH_KEY] ?? "public");
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    (paths[path] ??= {})[route.method.toLowerCase()] = buildOperation(route, contract, level, reg);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: { title: opts.title, version: opts.version, description: opts.description },
    servers: [{ url: opts.publicUrl, description: "server.public_url" }],
    tags: opts.tags,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(reg.schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        session: { type: "apiKey", in: "cookie", name: opts.sessionCookie, description: "Browser session (set by /api/auth/signin)." },
        apiKey: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "sbx_ak_<64 hex>",
          description: "API key (POST /api/user/api_keys). Never an operator; not accepted by /api/user/api_keys*.",
        },
        jwt: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description:
            "HS256 service-account token (`secbox token`). A `sub` equal to a user's email acts as that user; any other `sub` has no user (user routes: 403 NO_USER).",
        },
        operatorSession: {
          type: "apiKey",
          in: "cookie",
          name: opts.sessionCookie,
          description: "Operator routes: the session of a user whose email is listed in security.operators and proven (others: 403 NOT_OPERATOR).",
        },
        operatorJwt: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "Operator routes: a service-account JWT whose `sub` is listed in security.operators.",
        },
        shareId: {
          type: "apiKey",
          in: "header",
          name: "X-User-Share-ID",
          description: "Share id of a shared certificate template or policy (alias X-Secbox-Share-ID).",
        },
      },
    },
  };
}
