// `secbox migrate` (supplement §23.1, §23.3): applies pending migrations and exits. Opening the runtime migrates
// and verifies the master key, on SQLite or PostgreSQL ([database] url); a database newer than this binary fails with DatabaseTooNewError (exit 1).
import { openRuntime } from "../platform/boot";
import { createLogger } from "../platform/log";
import { configFrom, EXIT_OK, helpRequested, parseFlags, type Command } from "./common";

export const migrateCommand: Command = {
  name: "migrate",
  summary: "apply database migrations and exit",
  usage: "secbox migrate [--config FILE] [--data-dir DIR]",
  async run(argv) {
    const { values } = parseFlags(argv, {});
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const config = configFrom(values);
    const rt = await openRuntime(config, { log: createLogger(config.server.log_level), cli: true });
    await rt.close();
    return EXIT_OK;
  },
};
