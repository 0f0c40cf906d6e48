// `secbox data export|import` (supplement §19, §23.3). The user-data feature is not built yet; the commands
// already parse their flags and report that they are unavailable (exit 1).
import { commandGroup, notYetAvailable } from "./common";

const exportCmd = notYetAvailable("data", "export", "export a user's data (stdout without --output)", "secbox data export --email E [--output FILE]", {
  email: { type: "string" },
  output: { type: "string" },
});

const importCmd = notYetAvailable(
  "data",
  "import",
  "import a user's data from an export file",
  "secbox data import --email E --input FILE [--mode merge|apply] [--on-conflict rename|overwrite|skip]",
  { email: { type: "string" }, input: { type: "string" }, mode: { type: "string" }, "on-conflict": { type: "string" } },
);

export const dataCommand = commandGroup("data", "user data: export, import", [exportCmd, importCmd]);
