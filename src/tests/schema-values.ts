// Values generated from the OpenAPI document's JSON schemas, for the schema-driven fuzzer (fuzz.test.ts): a valid
// value of a schema, and per member the boundary values (the limits themselves, and one past them) and invalid
// values (wrong types, values outside an enum or a pattern, null where it is not allowed). Deterministic: choices
// come from the caller's PRNG.
type Json = Record<string, any>;
export type Rng = () => number;

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export interface SchemaValuesOptions {
  /** The URL given for every `uri` string and in place of every http(s) example (default https://example.com/). */
  uri?: string;
}

export class SchemaValues {
  constructor(
    private readonly doc: Json,
    private readonly opts: SchemaValuesOptions = {},
  ) {}

  /** A schema with `$ref`s at its top resolved (components only). */
  resolve(schema: any): any {
    let s = schema;
    for (let i = 0; i < 20 && isObj(s) && typeof s.$ref === "string"; i++) s = this.doc.components.schemas[s.$ref.split("/").pop()!];
    return s ?? {};
  }

  /** The alternatives of a union (`anyOf`/`oneOf`), else the schema itself, resolved. */
  alternatives(schema: any): any[] {
    const s = this.resolve(schema);
    const alts = s.anyOf ?? s.oneOf;
    return Array.isArray(alts) ? alts.flatMap((a: any) => this.alternatives(a)) : [s];
  }

  /** The first alternative that is not `null`. */
  main(schema: any): any {
    const alts = this.alternatives(schema);
    return alts.find((a) => a.type !== "null") ?? alts[0] ?? {};
  }

  /** A value the schema accepts (examples and defaults first; required members only, plus one optional). */
  valid(schema: any, depth = 0): unknown {
    const s = this.main(schema);
    if (Array.isArray(s.examples) && s.examples.length > 0) {
      const example = s.examples[0];
      return this.opts.uri !== undefined && typeof example === "string" && /^https?:\/\//i.test(example) ? this.opts.uri : example;
    }
    if (s.const !== undefined) return s.const;
    if (Array.isArray(s.enum)) return s.enum[0];
    switch (s.type) {
      case "string":
        return this.string(s);
      case "integer":
      case "number":
        return typeof s.minimum === "number" ? s.minimum : typeof s.maximum === "number" ? Math.min(s.maximum, 1) : 1;
      case "boolean":
        return true;
      case "array": {
        if (Array.isArray(s.prefixItems)) return s.prefixItems.map((p: any) => this.valid(p, depth + 1));
        const n = Math.max(s.minItems ?? 0, depth < 3 && s.items ? 1 : 0);
        return Array.from({ length: n }, () => this.valid(s.items, depth + 1));
      }
      case "object": {
        const out: Json = {};
        for (const name of s.required ?? []) out[name] = this.valid(s.properties?.[name], depth + 1);
        return out;
      }
      default:
        return {};
    }
  }

  private string(s: any): string {
    if (s.format === "uuid") return "0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40";
    if (s.format === "email") return "fuzz@example.com";
    if (s.format === "uri") return this.opts.uri ?? "https://example.com/";
    if (typeof s.pattern === "string") {
      if (s.pattern.startsWith("^[A-Za-z][A-Za-z0-9_-]")) return "FUZZ_NAME";
      if (s.pattern.startsWith("^[a-z0-9]")) return "fuzzhandle";
      if (s.pattern === "^/") return "/fuzz";
      if (s.pattern.startsWith("^#")) return "#abc";
      if (s.pattern.startsWith("^sbx_ak_")) return `sbx_ak_${"0".repeat(64)}`;
    }
    const min = s.minLength ?? 0;
    return "fuzz".padEnd(Math.max(min, 4), "z").slice(0, s.maxLength ?? Infinity);
  }

  /**
   * Values of one member that sit on or just past its limits, and values of the wrong kind. Each is
   * `[label, value, valid]`: `valid` is whether the schema accepts it (the server may still refuse it for a rule
   * the schema cannot say, e.g. a duplicate name).
   */
  variants(schema: any, rng: Rng): [string, unknown, boolean][] {
    const alts = this.alternatives(schema);
    const nullable = alts.some((a) => a.type === "null");
    const s = this.main(schema);
    const out: [string, unknown, boolean][] = [["null", null, nullable]];
    const wrongType = s.type === "string" ? 12345 : "not-a-" + String(s.type ?? "value");
    if (alts.length === 1 || nullable) out.push(["wrong type", wrongType, false]);
    if (Array.isArray(s.enum)) {
      for (const v of s.enum) out.push([`enum ${v}`, v, true]);
      out.push(["outside the enum", `${String(s.enum[0])}-not`, false]);
    }
    if (s.type === "string" && !s.enum) {
      if (typeof s.minLength === "number" && s.minLength > 0) out.push(["below minLength", "x".repeat(s.minLength - 1), false]);
      if (typeof s.maxLength === "number") {
        out.push(["at maxLength", "x".repeat(s.maxLength), !s.pattern && !s.format]);
        out.push(["above maxLength", "x".repeat(s.maxLength + 1), false]);
      }
      if (s.format === "uuid") out.push(["malformed uuid", "not-a-uuid", false], ["unknown uuid", randomUuid(rng), true]);
      if (s.format === "email") out.push(["malformed email", "no-at-sign", false]);
      if (s.format === "uri")
        out.push(["relative url", "/not/absolute", false], ["private target", "http://127.0.0.1:1/", true], ["file url", "file:///etc/passwd", true]);
      if (typeof s.pattern === "string") out.push(["outside the pattern", " \u0000bad pattern\n", false]);
      out.push(
        ["control characters", "a\u0000\u001b[31mb", !s.pattern && !s.format],
        ["long", "y".repeat(3000), s.maxLength === undefined && !s.pattern && !s.format],
      );
    }
    if (s.type === "integer" || s.type === "number") {
      if (typeof s.minimum === "number") out.push(["minimum", s.minimum, true], ["below minimum", s.minimum - 1, false]);
      if (typeof s.maximum === "number") out.push(["maximum", s.maximum, true], ["above maximum", s.maximum + 1, false]);
      if (s.type === "integer") out.push(["fraction", 1.5, false]);
      out.push(["huge", 2 ** 53 + 2, s.maximum === undefined], ["negative", -1, s.minimum === undefined || s.minimum <= -1]);
    }
    if (s.type === "array") {
      if (typeof s.maxItems === "number" && s.maxItems < 200 && !s.prefixItems)
        out.push(["above maxItems", Array.from({ length: s.maxItems + 1 }, () => this.valid(s.items, 2)), false]);
      out.push(["empty array", [], (s.minItems ?? 0) === 0], ["array of wrong items", [{ wrong: true }], false]);
    }
    if (s.type === "object") out.push(["empty object", {}, (s.required ?? []).length === 0], ["array instead", [], false]);
    return out;
  }

  /** The members of an object schema (its union alternatives merged), resolved. */
  members(schema: any): Record<string, any> {
    const out: Record<string, any> = {};
    for (const alt of this.alternatives(schema)) if (isObj(alt.properties)) Object.assign(out, alt.properties);
    return out;
  }
}

export function randomUuid(rng: Rng): string {
  const h = Array.from({ length: 32 }, () => "0123456789abcdef"[Math.floor(rng() * 16)]).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
}
