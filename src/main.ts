#!/usr/bin/env bun
// Entry point: `secbox <command>` (also `bun run src/main.ts <command>`).
import { runCli } from "./cli/index";

const code = await runCli(process.argv.slice(2));
process.exitCode = code;
if (process.argv[2] !== "serve") process.exit(code);
