// `secbox data export|import` (supplement §19, §23.3): a user's data to and from an export file, on the data
// directory directly (also while a server runs: SQLite WAL; the server notices the commit within ~100 ms and drops
// its cached responders and reschedules trackers). Through the user-data feature's service, so the rules are the
// API's: the same file format, the same all-or-nothing import. `--mode apply` deletes what the preview lists in
// toDelete only with `--delete-missing` (§27); without it those are printed on stderr and left in place.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { migrateDataCmd } from "./data-migrate";
import {
  commandGroup,
  emailFlag,
  EXIT_OK,
  EXIT_USAGE,
  helpRequested,
  parseFlags,
  printJson,
  RuntimeError,
  UsageError,
  userByEmail,
  withServices,
  type Command,
} from "./common";

/** Environment variable holding the secrets passphrase (supplement §23.3). */
export const PASSPHRASE_ENV = "SECBOX_SECRETS_PASSPHRASE";

/** `--secrets-passphrase-file F` (its first line), else SECBOX_SECRETS_PASSPHRASE, else none. */
function passphraseFrom(values: Record<string, unknown>): string | undefined {
  const file = values["secrets-passphrase-file"];
  if (typeof file === "string") {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`--secrets-passphrase-file: cannot read ${file}: ${(err as Error).message}`);
    }
    const line = text.split(/\r?\n/)[0] ?? "";
    if (line === "") throw new UsageError("--secrets-passphrase-file: the file's first line is empty");
    return line;
  }
  const env = process.env[PASSPHRASE_ENV];
  return env === undefined || env === "" ? undefined : env;
}

function oneOf<T extends string>(values: Record<string, unknown>, name: string, allowed: readonly T[]): T | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (!(allowed as readonly unknown[]).includes(v)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}`);
  return v as T;
}

const exportCmd: Command = {
  name: "export",
  summary: `export everything of a user, history included (stdout without --output); secret values when ${PASSPHRASE_ENV} or --secrets-passphrase-file is set`,
  usage: "secbox data export --email E [--output FILE] [--secrets-passphrase-file F]",
  async run(argv) {
    const { values } = parseFlags(argv, {
      email: { type: "string" },
      output: { type: "string" },
      out: { type: "string" },
      "secrets-passphrase-file": { type: "string" },
    });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    if (values.output !== undefined && values.out !== undefined) throw new UsageError("give --output or --out, not both");
    const output = values.output ?? values.out;
    if (output === "") throw new UsageError("--output must not be empty");
    const passphrase = passphraseFrom(values);
    if (passphrase !== undefined && [...passphrase].length < 8) throw new UsageError("the secrets passphrase must be at least 8 characters");
    return withServices(values, async (services) => {
      const row = await userByEmail(services, email);
      const all = {
        types: Object.fromEntries(
          [
            "tags",
            "scripts",
            "secrets",
            "responders",
            "certificateTemplates",
            "privateKeys",
            "contentSecurityPolicies",
            "pageTrackers",
            "apiTrackers",
          ].map((t) => [t, { history: true }]),
        ),
        settings: true,
      };
      const { chunks } = await services.userData.exportWith(row.id, all, passphrase);
      // The file may hold unencrypted private keys: readable by its owner only.
      const fd = output === undefined ? 1 : openSync(output, "w", 0o600);
      try {
        for await (const chunk of chunks) {
          const bytes = Buffer.from(chunk, "utf8");
          for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
        }
      } finally {
        if (fd !== 1) closeSync(fd);
      }
      return EXIT_OK;
    });
  },
};

/** What `--mode apply` left in place without `--delete-missing`, for stderr (stdout stays the JSON result). */
function notDeletedLines(notDeleted: Record<string, { id: string; name: string }[]>): string {
  const entries = Object.entries(notDeleted).flatMap(([type, list]) => list.map((e) => `  ${type}: ${JSON.stringify(e.name)} (${e.id})`));
  const n = entries.length;
  return `nothing deleted: ${n} ${n === 1 ? "entity is" : "entities are"} not in the file and would have been deleted with --delete-missing:\n${entries.join("\n")}\n`;
}

const importCmd: Command = {
  name: "import",
  summary: `import an export file into a user, all or nothing (--dry-run prints the preview; --mode apply --delete-missing also deletes what the preview lists in toDelete, without --delete-missing those are only listed on stderr); passphrase from ${PASSPHRASE_ENV} or --secrets-passphrase-file`,
  usage:
    "secbox data import --email E (--input FILE | FILE) [--mode merge|apply [--delete-missing]] [--on-conflict rename|overwrite|skip] [--dry-run] [--secrets-passphrase-file F]",
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        email: { type: "string" },
        input: { type: "string" },
        mode: { type: "string" },
        "on-conflict": { type: "string" },
        "dry-run": { type: "boolean" },
        "delete-missing": { type: "boolean" },
        "secrets-passphrase-file": { type: "string" },
      },
      true,
    );
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const email = emailFlag(values);
    if (positionals.length > 1) throw new UsageError("give one input file");
    if (values.input !== undefined && positionals.length > 0) throw new UsageError("give the file as --input FILE or as an argument, not both");
    const input = values.input ?? positionals[0];
    if (input === undefined || input === "") throw new UsageError("--input FILE is required");
    const mode = oneOf(values, "mode", ["merge", "apply"] as const) ?? "merge";
    const resolution = oneOf(values, "on-conflict", ["rename", "overwrite", "skip"] as const) as "rename" | "overwrite" | "skip" | undefined;
    const deleteMissing = values["delete-missing"] === true;
    if (deleteMissing && mode !== "apply") throw new UsageError("--delete-missing needs --mode apply (merge never deletes)");
    const passphrase = passphraseFrom(values);
    let text: string;
    try {
      text = readFileSync(input, "utf8");
    } catch (err) {
      throw new RuntimeError(`cannot read ${input}: ${(err as Error).message}`);
    }
    return withServices(values, async (services) => {
      const row = await userByEmail(services, email);
      const user = services.users.toAuthUser(row);
      if (values["dry-run"]) {
        const preview = await services.userData.preview(user, { data: text, mode });
        printJson(preview);
        return preview.valid ? EXIT_OK : EXIT_USAGE;
      }
      const { result, notDeleted } = await services.userData.importAll(user, text, {
        mode,
        deleteMissing,
        ...(resolution ? { resolution } : {}),
        ...(passphrase !== undefined ? { secretsPassphrase: passphrase } : {}),
      });
      printJson(result);
      if (notDeleted) process.stderr.write(notDeletedLines(notDeleted));
      return EXIT_OK;
    });
  },
};

export const dataCommand = commandGroup("data", "user data: export, import; migrate an instance between backends", [
  exportCmd,
  importCmd,
  migrateDataCmd,
]);
