// `secbox mail list [--status S]`: the outbox (supplement §18.1, §23.3).
import { commandGroup, EXIT_OK, helpRequested, parseFlags, printJson, UsageError, withServices, type Command } from "./common";

const STATUSES = ["queued", "sent", "failed", "held"];

const list: Command = {
  name: "list",
  summary: "show the outbox, oldest first",
  usage: `secbox mail list [--status ${STATUSES.join("|")}]`,
  async run(argv) {
    const { values } = parseFlags(argv, { status: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const status = values.status;
    if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(", ")}`);
    return withServices(values, async ({ outbox }) => {
      const rows = await outbox.list(status);
      printJson(
        rows.map(({ id, to, subject, status, attempts, createdAt, lastError }) => ({
          id,
          to,
          subject,
          status,
          attempts,
          createdAt,
          ...(lastError ? { lastError } : {}),
        })),
      );
      return EXIT_OK;
    });
  },
};

export const mailCommand = commandGroup("mail", "outbox: list", [list]);
