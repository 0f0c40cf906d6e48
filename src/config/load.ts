// Loads the configuration: built-in defaults < TOML file < SECBOX_* environment < `serve` flags
// (supplement §23.1–23.2). Any problem is a ConfigError naming the offending key. The result is the effective
// configuration: an empty `server.public_url` becomes http://localhost:<effective port> (§27), so every consumer
// reads the URL the server really answers on.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { ConfigSchema, TIERS, TIER_DEFAULTS, leafKind, type Config, type Tier } from "./schema";

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`${key}: ${reason}`);
  }
}

export interface ConfigFlags {
  host?: string;
  port?: string | number;
  dataDir?: string;
}

export interface LoadOptions {
  /** `--config FILE` */
  file?: string;
  env?: Record<string, string | undefined>;
  flags?: ConfigFlags;
}

type Tree = Record<string, any>;

/** `server` sections whose public_url was derived from the port (not configured). */
const derivedPublicUrl = new WeakSet<object>();

/** True when `server.public_url` was not configured and is http://localhost:<port> (§27). */
export const publicUrlDerived = (config: Pick<Config, "server">): boolean => derivedPublicUrl.has(config.server);
const SECTIONS = Object.keys(ConfigSchema.properties);

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const tree: Tree = readFile(opts.file ?? env.SECBOX_CONFIG);
  applyEnv(tree, env);
  applyFlags(tree, opts.flags ?? {});
  return validate(tree);
}

function readFile(named: string | undefined): Tree {
  let path = named;
  if (path === undefined || path === "") {
    if (!existsSync("secbox.toml")) return {};
    path = "secbox.toml";
  } else if (!existsSync(path)) {
    throw new ConfigError("config", `file not found: ${path}`);
  }
  try {
    const parsed = Bun.TOML.parse(readFileSync(path, "utf8"));
    return (parsed ?? {}) as Tree;
  } catch (err) {
    throw new ConfigError("config", `${path} is not valid TOML: ${(err as Error).message}`);
  }
}

/** Sub-object at `path`, created when missing; a non-object in the way is a type error for that key. */
function branch(tree: Tree, path: string[]): Tree {
  let node = tree;
  for (let i = 0; i < path.length; i++) {
    const k = path[i]!;
    if (node[k] === undefined) node[k] = {};
    else if (typeof node[k] !== "object" || Array.isArray(node[k])) throw new ConfigError(path.slice(0, i + 1).join("."), "must be a table");
    node = node[k];
  }
  return node;
}

function coerce(key: string, schema: TSchema, raw: string): unknown {
  switch (leafKind(schema)) {
    case "integer": {
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(key, `must be an integer, got "${raw}"`);
      return Number(raw.trim());
    }
    case "boolean": {
      const v = raw.trim().toLowerCase();
      if (v === "true" || v === "1") return true;
      if (v === "false" || v === "0") return false;
      throw new ConfigError(key, `must be true, false, 1 or 0, got "${raw}"`);
    }
    case "array": {
      const items = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      const itemKind = leafKind((schema as any).items);
      return items.map((item) => (itemKind === "integer" ? coerce(key, (schema as any).items, item) : item));
    }
    default:
      return raw;
  }
}

function applyEnv(tree: Tree, env: Record<string, string | undefined>) {
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("SECBOX_") || value === undefined) continue;
    const rest = name.slice("SECBOX_".length).toLowerCase();
    const section = SECTIONS.find((s) => rest.startsWith(`${s}_`));
    if (!section) continue; // SECBOX_CONFIG, SECBOX_SECRETS_PASSPHRASE, ...: not overrides
    let key = rest.slice(section.length + 1);
    let path = [section];
    let sectionSchema = (ConfigSchema.properties as Record<string, any>)[section];
    if (section === "subscriptions" && key.startsWith("tiers_")) {
      const tier = TIERS.find((t) => key.startsWith(`tiers_${t}_`));
      if (!tier) throw new ConfigError(`${name}`, "unknown subscription tier");
      key = key.slice(`tiers_${tier}_`.length);
      path = [section, "tiers", tier];
      sectionSchema = sectionSchema.properties.tiers.properties[tier];
    }
    const leaf = sectionSchema.properties[key];
    const dotted = [...path, key].join(".");
    if (!leaf) throw new ConfigError(dotted, `unknown key (from environment variable ${name})`);
    branch(tree, path)[key] = coerce(dotted, leaf, value);
  }
}

function applyFlags(tree: Tree, flags: ConfigFlags) {
  const server = ConfigSchema.properties.server.properties;
  if (flags.host !== undefined) branch(tree, ["server"]).host = flags.host;
  if (flags.port !== undefined) branch(tree, ["server"]).port = coerce("server.port", server.port, String(flags.port));
  if (flags.dataDir !== undefined) branch(tree, ["server"]).data_dir = flags.dataDir;
}

function validate(tree: Tree): Config {
  for (const s of SECTIONS) if (tree[s] === undefined) tree[s] = {};
  if (tree.subscriptions && typeof tree.subscriptions === "object" && tree.subscriptions.tiers === undefined) tree.subscriptions.tiers = {};
  const withDefaults = Value.Default(ConfigSchema, tree) as Tree;
  const first = Value.Errors(ConfigSchema, withDefaults).First();
  if (first) {
    const key = first.path.replace(/^\//, "").replace(/\//g, ".") || "config";
    const literals = (first.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const).filter((v) => v !== undefined);
    const reason =
      first.message === "Unexpected property"
        ? "unknown key"
        : literals?.length
          ? `must be one of ${literals.join(", ")}`
          : first.message.replace(/^Expected/, "must be").replace("integer to be ", "");
    throw new ConfigError(key, reason);
  }
  const cfg = withDefaults as Config & { subscriptions: { tiers: Record<Tier, object> } };

  // §27: no configured public URL → the address this server answers on, with the port flags and environment gave.
  if (cfg.server.public_url === "") {
    cfg.server.public_url = `http://localhost:${cfg.server.port}`;
    derivedPublicUrl.add(cfg.server);
  }
  let url: URL;
  try {
    url = new URL(cfg.server.public_url);
  } catch {
    throw new ConfigError("server.public_url", "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError("server.public_url", "must be an absolute http(s) URL");
  cfg.server.public_url = cfg.server.public_url.replace(/\/+$/, "");
  if (cfg.security.jwt_secret !== "" && cfg.security.jwt_secret.length < 32)
    throw new ConfigError("security.jwt_secret", "must be empty or at least 32 characters");
  if (cfg.security.master_key !== "" && !/^[0-9a-fA-F]{64}$/.test(cfg.security.master_key))
    throw new ConfigError("security.master_key", "must be empty or 64 hex characters");
  cfg.server.data_dir = resolve(cfg.server.data_dir);
  if (cfg.database.url !== "" && !/^postgres(ql)?:\/\/./.test(cfg.database.url))
    throw new ConfigError("database.url", "must be empty (SQLite in data_dir) or a postgres:// URL");

  const tiers = {} as Record<Tier, any>;
  for (const tier of TIERS) tiers[tier] = { ...TIER_DEFAULTS[tier], ...cfg.subscriptions.tiers[tier] };
  cfg.subscriptions.tiers = tiers;
  return cfg as Config;
}
