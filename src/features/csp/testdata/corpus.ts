// The policy corpus of the CSP tests (csp-reference.test.ts, csp-roundtrip.test.ts): `real-world.txt` (policies in
// the shape big sites send them) and `bypasses.txt` (classic bypasses and edge cases). One policy per line,
// `<name> <policy text>`; blank lines and `#` comments are skipped.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface CorpusPolicy {
  name: string;
  file: string;
  policy: string;
}

export const CORPUS_FILES = ["real-world.txt", "bypasses.txt"] as const;

export function loadCorpus(): CorpusPolicy[] {
  const out: CorpusPolicy[] = [];
  for (const file of CORPUS_FILES) {
    for (const line of readFileSync(join(import.meta.dir, file), "utf8").split("\n")) {
      if (line.trim() === "" || line.startsWith("#")) continue;
      const m = /^([a-z0-9-]+) (.+)$/.exec(line);
      if (!m) throw new Error(`${file}: malformed line: ${line.slice(0, 80)}`);
      if (out.some((p) => p.name === m[1])) throw new Error(`${file}: duplicate name ${m[1]}`);
      out.push({ name: m[1]!, file, policy: m[2]! });
    }
  }
  return out;
}
