// Saving scripts that do not compile (issue 30, supplement §27): before a save the editor checks its scripts as they
// will run (code-editor/script-syntax.ts) and asks before saving one with a syntax error; after the save it shows the
// server's `warnings` (the server compiles with the real engine, so it has the last word). The checks and dialogs
// (script-check-ui.tsx, with acorn) load on first use, so the first load does not carry them.
import type { EditorScript } from "./code-editor/script-syntax";

export type { EditorScript };

const ui = () => import("./script-check-ui");

/** True to go on with the save: every script compiles, or the user chose "Save anyway". */
export async function confirmScriptsCompile(scripts: EditorScript[]): Promise<boolean> {
  const present = scripts.filter((s) => s.source.trim() !== "");
  if (present.length === 0) return true;
  return (await ui()).confirmScriptsCompile(present);
}

/** The server's syntax warnings of a save, if any, as a toast that stays long enough to read. */
export function notifyScriptWarnings(warnings: string[] | undefined): void {
  if (!warnings || warnings.length === 0) return;
  void ui().then((m) => m.notifyScriptWarnings(warnings));
}
