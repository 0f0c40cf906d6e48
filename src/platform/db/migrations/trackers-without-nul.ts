// Migration 14's data step (issue 29 C): trackers stored before API bodies refused U+0000 (supplement §28.1) may
// hold one in their JSON text, as the escape \u0000 (a tracker's request body, header or script). PostgreSQL's JSON
// functions refuse to read such a document at all, so its owner's searches over tracker URLs answered 500 (and a
// SQLite database carries such rows to PostgreSQL through `secbox data migrate`). Every U+0000 in their strings and
// member names becomes U+FFFD, on both backends. Done in TypeScript because telling the escape from a literal
// backslash followed by "u0000" needs a JSON parser, which SQL does not share across the two backends.
import type { Db } from "../db";

const clean = (v: unknown): unknown => {
  if (typeof v === "string") return v.replaceAll("\u0000", "\ufffd");
  if (Array.isArray(v)) return v.map(clean);
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, item]) => [clean(k) as string, clean(item)]));
  return v;
};

/** The JSON text without U+0000 (the same text when it had none; unparseable text is left as it is). */
function withoutNul(json: string): string {
  if (!json.includes("\\u0000")) return json;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return json;
  }
  const out = JSON.stringify(clean(value));
  return out === JSON.stringify(value) ? json : out;
}

export async function trackersWithoutNul(tx: Db): Promise<void> {
  // The escape's six characters, as LIKE text ('!' escapes nothing here: the backslash is literal on both backends).
  const pattern = "%\\u0000%";
  const rows = await tx.all<{ id: string; config: string; target: string }>(
    "SELECT id, config, target FROM trackers WHERE config LIKE ? ESCAPE '!' OR target LIKE ? ESCAPE '!'",
    [pattern, pattern],
  );
  for (const r of rows) {
    const config = withoutNul(r.config);
    const target = withoutNul(r.target);
    if (config !== r.config || target !== r.target) await tx.run("UPDATE trackers SET config = ?, target = ? WHERE id = ?", [config, target, r.id]);
  }
}
