// `secbox users add|list|remove|set-tier|recover|clone` (supplement §23.3): user administration on the data
// directory, through UsersService (the same rules as the operator API of §4.2).
import {
  commandGroup,
  emailFlag,
  EXIT_OK,
  helpRequested,
  intFlag,
  parseFlags,
  positiveIntFlag,
  printJson,
  printLine,
  tierFlag,
  RuntimeError,
  UsageError,
  userByEmail,
  withServices,
  type Command,
} from "./common";

/** Lifetime of the recovery link printed by `users add` without a password, and the `users recover` default. */
export const CLI_RECOVERY_TTL_SEC = 86_400;

const add: Command = {
  name: "add",
  summary: "create an activated user; without --password also prints a 24 h recoveryLink",
  usage: "secbox users add --email E [--password P] [--tier basic|standard|professional|ultimate]",
  async run(argv) {
    const { values } = parseFlags(argv, { email: { type: "string" }, password: { type: "string" }, tier: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    const tier = tierFlag(values);
    const password = values.password;
    if (password === "") throw new UsageError("--password must not be empty (omit it to get a recovery link)");
    return withServices(values, async ({ users }) => {
      // The CLI runs with access to the data directory: its accounts count as having proven their email (§3.5).
      const row = await users.create({ email, password, tier, activated: true, emailProof: "cli" });
      const user = users.toUser(row);
      if (password !== undefined) printJson(user);
      else printJson({ ...user, recoveryLink: await users.issueRecoveryToken(row.id, CLI_RECOVERY_TTL_SEC) });
      return EXIT_OK;
    });
  },
};

const list: Command = {
  name: "list",
  summary: "print every user as a JSON array",
  usage: "secbox users list",
  async run(argv) {
    const { values } = parseFlags(argv, {});
    if (helpRequested(values, this.usage)) return EXIT_OK;
    return withServices(values, async ({ users }) => {
      printJson(await users.listUsers());
      return EXIT_OK;
    });
  },
};

const remove: Command = {
  name: "remove",
  summary: "delete a user and everything they own (unknown email: exit 1)",
  usage: "secbox users remove --email E",
  async run(argv) {
    const { values } = parseFlags(argv, { email: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    return withServices(values, async (services) => {
      const row = await userByEmail(services, email);
      if (!(await services.users.removeUser(row.id))) throw new RuntimeError(`no user with email ${email}`);
      return EXIT_OK;
    });
  },
};

const setTier: Command = {
  name: "set-tier",
  summary: "change a user's subscription tier; --ends-at (unix seconds, in the future) sets its end",
  usage: "secbox users set-tier --email E --tier basic|standard|professional|ultimate [--ends-at UNIX]",
  async run(argv) {
    const { values } = parseFlags(argv, { email: { type: "string" }, tier: { type: "string" }, "ends-at": { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    const tier = tierFlag(values);
    if (tier === undefined) throw new UsageError("--tier is required");
    const endsAt = intFlag(values, "ends-at");
    return withServices(values, async (services) => {
      await userByEmail(services, email);
      await services.users.setSubscription(email, { tier, endsAt });
      return EXIT_OK;
    });
  },
};

const recover: Command = {
  name: "recover",
  summary: "issue a new recovery token (voids older ones) and print the link URL",
  usage: "secbox users recover --email E [--ttl SECONDS]",
  async run(argv) {
    const { values } = parseFlags(argv, { email: { type: "string" }, ttl: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    const ttl = positiveIntFlag(values, "ttl", CLI_RECOVERY_TTL_SEC)!;
    return withServices(values, async (services) => {
      const row = await userByEmail(services, email);
      printLine((await services.users.issueRecoveryToken(row.id, ttl)).url);
      return EXIT_OK;
    });
  },
};

const clone: Command = {
  name: "clone",
  summary:
    "copy a user's data into a new activated user without a password (§19.5: history and subscription included); prints the CloneResponse with a 1-hour recovery link",
  usage: "secbox users clone --from E --to E2",
  async run(argv) {
    const { values } = parseFlags(argv, { from: { type: "string" }, to: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const from = emailFlag(values, "from");
    const to = emailFlag(values, "to");
    return withServices(values, async (services) => {
      await userByEmail(services, from);
      const { cloneUser } = await import("../features/user-data/clone");
      printJson(await cloneUser(services.userData, { source: { email: from }, destination: { email: to } }));
      return EXIT_OK;
    });
  },
};

export const usersCommand = commandGroup("users", "manage users: add, list, remove, set-tier, recover, clone", [
  add,
  list,
  remove,
  setTier,
  recover,
  clone,
]);
