// Shared CLI plumbing: flag parsing, config loading, exit codes and output (supplement §23.3).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, loadConfig } from "../config/load";
import type { Config } from "../config/schema";

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

/** Maps exceptions to the documented exit codes and messages. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`config error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
  return EXIT_RUNTIME;
}
