// `secbox status set --level available|unavailable` (supplement §21, §23.3).
import { STATUS_LEVELS } from "../features/status/contract";
import { commandGroup, EXIT_OK, helpRequested, parseFlags, requireFlag, UsageError, withServices, type Command } from "./common";

const set: Command = {
  name: "set",
  summary: "set the informational status level shown by GET /api/status",
  usage: `secbox status set --level ${STATUS_LEVELS.join("|")}`,
  async run(argv) {
    const { values } = parseFlags(argv, { level: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const level = requireFlag(values, "level");
    if (!(STATUS_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--level must be one of ${STATUS_LEVELS.join(", ")}`);
    return withServices(values, async ({ status }) => {
      await status.setLevel(level);
      return EXIT_OK;
    });
  },
};

export const statusCommand = commandGroup("status", "server status level: set", [set]);
