// The API contract of a route (issue 19): what the OpenAPI document says about it. A route declares its typed
// request body, query, success responses and error codes with `detail: op({...})`; platform/http/openapi.ts turns
// the route table into the document. The schemas are TypeBox (`T`, plain JSON Schema: integers are integers), and
// they describe the contract only: requests are still validated by the services (exact messages and the check
// order of supplement §1), responses are whatever the services produce. The test harness checks every response
// the API tests receive against the document (src/tests/conformance.ts) and the fuzzer drives every operation from
// it (src/tests/fuzz.test.ts), so document and behaviour stay in step.
//
// Credentials, and the 401/403 they cause, come from the route's `auth` level (platform/auth/plugin.ts adds it to
// `detail`); 400 INVALID_JSON/BAD_CONTENT_TYPE and 413 from the body; 404 from path ids. A route lists only its own
// codes in `errors`.
import { Type as T, type SchemaOptions, type Static, type TObject, type TOptional, type TSchema, type TUnknown } from "@sinclair/typebox";
import { t } from "elysia";
import type { DocumentDecoration } from "elysia";
import type { ErrorCode } from "../core/errors";

export { T, type Static };

/** A named schema: listed once under `components.schemas` and referenced with `$ref` wherever it is used. */
export function Named<S extends TSchema>(name: string, schema: S): S {
  return { ...schema, $id: name };
}

export const Uuid = (options: SchemaOptions = {}) => T.String({ format: "uuid", ...options });
/** Integer unix seconds (supplement §1). */
export const UnixTime = (description = "unix seconds") => T.Integer({ description });
/** A string from a fixed list (`enum` in the document, a union of literals in generated clients). */
export const StringEnum = <const V extends readonly string[]>(values: V, options: SchemaOptions = {}) =>
  T.Unsafe<V[number]>({ type: "string", enum: [...values], ...options });
export const Nullable = <S extends TSchema>(schema: S, options: SchemaOptions = {}) => T.Union([schema, T.Null()], options);
/** An optional request member: absent or `null` both mean "not set" (supplement §1). */
export const Opt = <S extends TSchema>(schema: S) => T.Optional(Nullable(schema));
/** A JSON object with arbitrary keys and values of one schema (`additionalProperties` in the document). */
export const Dict = <S extends TSchema>(value: S, options: SchemaOptions = {}) => T.Record(T.String(), value, options);
/** `[name, value]` pairs (responder headers): a tuple, `prefixItems` in the document. */
export const HeaderPair = T.Tuple([T.String({ description: "name" }), T.String({ description: "value" })]);

/** The page wrapper of a list (supplement §1): `Page_<item name>`. */
export const Page = <S extends TSchema>(itemName: string, item: S) =>
  Named(
    `Page_${itemName}`,
    T.Object({ items: T.Array(item), total: T.Integer({ minimum: 0, description: "items matching the filter across all pages" }) }),
  );

/** A response that is not JSON (text/plain, text/html) or that carries headers. */
export interface Media {
  mediaType: string;
  schema?: TSchema;
  headers?: Record<string, { description: string; schema?: Record<string, unknown> }>;
  description?: string;
}
export const media = (mediaType: string, schema?: TSchema, extra: Omit<Media, "mediaType" | "schema"> = {}): Media => ({
  mediaType,
  schema,
  ...extra,
});
export const isMedia = (v: unknown): v is Media => typeof v === "object" && v !== null && typeof (v as Media).mediaType === "string";

export interface RouteContract {
  /** API tag (interface.md's resource groups). */
  tags: string[];
  summary: string;
  description?: string;
  /** The JSON request body. Required in the document when it has required members. */
  body?: TObject;
  /** The route also reads `application/x-www-form-urlencoded` and `multipart/form-data` bodies (unsubscribe). */
  form?: boolean;
  /** Query parameters, one per member. */
  query?: TObject;
  /** Success responses: a JSON schema, a Media, or `null` for no body (204). */
  responses: Record<number, TSchema | Media | null>;
  /** Error codes by status, besides those implied by the auth level, the body and path ids. */
  errors?: Partial<Record<400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503, ErrorCode[]>>;
  /** Public, but credentials are used when present (send_message, sign-out): the document lists them as optional. */
  optionalAuth?: boolean;
  /** A request body that works as is (the docs page's "Try it out"). */
  example?: Record<string, unknown>;
}

/** The key under which a route's `detail` carries its contract (removed from the document). */
export const CONTRACT_KEY = "x-secbox-contract";
/** The key under which the auth macro records the route's level (removed from the document). */
export const AUTH_KEY = "x-secbox-auth";

/** A route's `detail`: its summary for the docs plus the contract. */
export function op(contract: RouteContract): DocumentDecoration {
  return { tags: contract.tags, summary: contract.summary, [CONTRACT_KEY]: contract } as DocumentDecoration;
}

/**
 * The runtime body schema of a route whose service validates everything: a JSON object whose members (the
 * contract's) are read as they came. Elysia only checks that the body is an object; unknown members are dropped
 * (supplement §1: unknown request fields are ignored); types, values and messages are the service's.
 */
export function looseBody<S extends TObject>(contract: S): TObject<{ [K in keyof S["properties"]]: TOptional<TUnknown> }> {
  return t.Object(Object.fromEntries(Object.keys(contract.properties).map((k) => [k, t.Optional(t.Unknown())]))) as never;
}

/** What a service receives from a `looseBody(S)` route: the contract's members, each as it came (checked by the
 *  service), so a body's member names are declared once, in the contract. */
export type LooseInput<S extends TObject> = { [K in keyof S["properties"]]?: unknown };
