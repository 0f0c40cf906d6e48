// Command dispatch. Every command takes --config, --data-dir and --help (supplement §23.3).
import { VERSION } from "../platform/runtime";
import { apiKeysCommand } from "./api-keys";
import { EXIT_OK, EXIT_USAGE, exitCodeFor, helpRequested, parseFlags, type Command } from "./common";
import { dataCommand } from "./data";
import { mailCommand } from "./mail";
import { migrateCommand } from "./migrate";
import { statusCommand } from "./status";
import { tokenCommand } from "./token";
import { usersCommand } from "./users";

/** `serve` pulls in the whole application; it is loaded only when run (its --help included). */
const serveCommand: Command = {
  name: "serve",
  summary: "run the server (API, responders, scheduler, mail sender)",
  usage: "secbox serve [--host HOST] [--port PORT]",
  run: async (argv) => (await import("./serve")).serveCommand.run(argv),
};

const versionCommand: Command = {
  name: "version",
  summary: "print the version (also --version)",
  usage: "secbox version",
  async run(argv) {
    const { values } = parseFlags(argv, {});
    if (helpRequested(values, this.usage)) return EXIT_OK;
    process.stdout.write(`${VERSION}\n`);
    return EXIT_OK;
  },
};

export const COMMANDS: Command[] = [
  serveCommand,
  usersCommand,
  apiKeysCommand,
  tokenCommand,
  statusCommand,
  mailCommand,
  dataCommand,
  migrateCommand,
  versionCommand,
];

export function helpText(): string {
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`);
  return `secbox ${VERSION}: self-hosted security toolbox\n\nUsage: secbox <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nEvery command takes --config FILE, --data-dir DIR and --help.\nRun 'secbox <command> --help' for a command's options.\n`;
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(helpText());
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = name === "--version" ? versionCommand : COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`error: unknown command '${name}'\n\n${helpText()}`);
    return EXIT_USAGE;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    return exitCodeFor(err);
  }
}
