// Shared CLI plumbing: flag parsing, config loading, exit codes and output (supplement §23.3).
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Services } from "../app";
import { ConfigError, loadConfig, publicUrlDerived } from "../config/load";
import { TIERS, type Config, type Tier } from "../config/schema";
import { ApiError } from "../platform/core/errors";
import { normalizeEmail } from "../platform/core/validate";

export const EXIT_OK = 0;
export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;

/** A usage problem: unknown flag, missing argument. Exit code 2. */
export class UsageError extends Error {}
/** A runtime failure: unknown user, database problem. Exit code 1. */
export class RuntimeError extends Error {}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

export const COMMON_OPTIONS = {
  config: { type: "string" },
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

export function parseFlags<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, strict: true, allowPositionals });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function configFrom(values: { config?: string; "data-dir"?: string; host?: string; port?: string }): Config {
  return loadConfig({ file: values.config, flags: { dataDir: values["data-dir"], host: values.host, port: values.port } });
}

export const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
export const printLine = (text: string) => process.stdout.write(`${text}\n`);

export function requireFlag(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

export function intFlag(values: Record<string, unknown>, name: string, fallback?: number): number | undefined {
  const v = values[name];
  if (v === undefined) return fallback;
  if (typeof v !== "string" || !/^\d+$/.test(v)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(v);
}

/** A strictly positive integer flag (durations such as --ttl, --expires-in). */
export function positiveIntFlag(values: Record<string, unknown>, name: string, fallback?: number): number | undefined {
  const n = intFlag(values, name, fallback);
  if (n !== undefined && (n < 1 || !Number.isSafeInteger(n))) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}

/** `--email`: required and well-formed (supplement §3.3), lower-cased. */
export function emailFlag(values: Record<string, unknown>, name = "email"): string {
  const raw = requireFlag(values, name);
  try {
    return normalizeEmail(raw, `--${name}`);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function tierFlag(values: Record<string, unknown>, name = "tier"): Tier | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (!(TIERS as readonly unknown[]).includes(v)) throw new UsageError(`--${name} must be one of ${TIERS.join(", ")}`);
  return v as Tier;
}

/** Prints the usage and returns true when --help was given. */
export function helpRequested(values: { help?: boolean }, usage: string): boolean {
  if (!values.help) return false;
  process.stdout.write(`${usage}\n`);
  return true;
}

/**
 * Opens the data directory (migrated, master key verified), builds the services and runs `fn`; the database is
 * closed afterwards. SQLite runs in WAL mode with a busy timeout, so this works next to a running server; on
 * PostgreSQL the command's commits are announced to running servers (boot's `cli`).
 */
export async function withServices<T>(values: { config?: string; "data-dir"?: string }, fn: (s: Services) => Promise<T>): Promise<T> {
  const config = configFrom(values);
  // Loaded on demand: help, usage errors and `token` stay fast because they never build the application.
  const [{ createServices }, { openRuntime }, { createLogger }] = await Promise.all([
    import("../app"),
    import("../platform/boot"),
    import("../platform/log"),
  ]);
  const rt = await openRuntime(config, { log: createLogger(config.server.log_level), cli: true });
  try {
    const services = createServices(rt);
    // No public_url configured: links (recovery links of `users recover` / `users add`) name the address the server
    // last started on with this data (its --port), not this command's default port (§27).
    if (publicUrlDerived(config)) rt.config.server.public_url = (await services.status.rememberedPublicUrl()) ?? rt.config.server.public_url;
    return await fn(services);
  } finally {
    await rt.close();
  }
}

/** The user row for an email, or a runtime error (exit 1) naming it. */
export async function userByEmail(services: Services, email: string) {
  const row = await services.users.getRowByEmail(email);
  if (!row) throw new RuntimeError(`no user with email ${email}`);
  return row;
}

/** A command group such as `users add|list|...`: dispatches to its subcommands. */
export function commandGroup(name: string, summary: string, subcommands: Command[]): Command {
  const usage = `Usage: secbox ${name} <subcommand> [options]\n\nSubcommands:\n${subcommands
    .map((c) => `  ${c.usage}\n      ${c.summary}`)
    .join("\n")}\n\nEvery subcommand also takes --config FILE, --data-dir DIR and --help.`;
  return {
    name,
    summary,
    usage,
    async run(argv) {
      const [sub, ...rest] = argv;
      if (sub === "--help" || sub === "-h" || sub === "help") {
        process.stdout.write(`${usage}\n`);
        return EXIT_OK;
      }
      if (sub === undefined || sub.startsWith("-")) throw new UsageError(`'${name}' needs a subcommand (before its options)\n\n${usage}`);
      const command = subcommands.find((c) => c.name === sub);
      if (!command) throw new UsageError(`unknown subcommand '${name} ${sub}'\n\n${usage}`);
      return command.run(rest);
    },
  };
}

/** Service errors for bad input are usage errors (exit 2); everything else is a runtime error (exit 1). */
const USAGE_CODES = new Set(["INVALID_INPUT", "WEAK_PASSWORD"]);

/** Maps exceptions to the documented exit codes and messages. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`config error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof UsageError || (err instanceof ApiError && USAGE_CODES.has(err.code))) {
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
  return EXIT_RUNTIME;
}
