// `secbox api-keys create` (supplement §23.3, §5): mints an API key for a user and prints the token only.
import { nowSec } from "../platform/runtime";
import {
  commandGroup,
  emailFlag,
  EXIT_OK,
  helpRequested,
  parseFlags,
  positiveIntFlag,
  printLine,
  requireFlag,
  userByEmail,
  withServices,
  type Command,
} from "./common";

const create: Command = {
  name: "create",
  summary: "create an API key for a user and print its token (shown once)",
  usage: "secbox api-keys create --email E --name N [--expires-in SECONDS]",
  async run(argv) {
    const { values } = parseFlags(argv, { email: { type: "string" }, name: { type: "string" }, "expires-in": { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    const name = requireFlag(values, "name");
    const expiresIn = positiveIntFlag(values, "expires-in");
    return withServices(values, async (services) => {
      const row = await userByEmail(services, email);
      const expiresAt = expiresIn === undefined ? undefined : nowSec(services.rt.clock) + expiresIn;
      const created = await services.apiKeys.createForUser(row.id, name, expiresAt);
      printLine(created.token);
      return EXIT_OK;
    });
  },
};

export const apiKeysCommand = commandGroup("api-keys", "manage API keys: create", [create]);
