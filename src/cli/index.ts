// Command dispatch. Every command takes --config, --data-dir and --help.
import { VERSION } from "../platform/runtime";
import { EXIT_USAGE, exitCodeFor, type Command } from "./common";
import { serveCommand } from "./serve";

export const COMMANDS: Command[] = [serveCommand];

export function helpText(): string {
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`);
  return `secbox ${VERSION}: self-hosted security toolbox\n\nUsage: secbox <command> [options]\n\nCommands:\n${lines.join("\n")}\n  version    print the version\n\nRun 'secbox <command> --help' for a command's options.\n`;
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(helpText());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === "version" || name === "--version") {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
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
