// What the revisions view computes from revision data (supplement §17.1): the text to diff (JSON pretty-printed
// with 2 spaces, as the API's own diffs), a number to chart (an extractor returning a number or {value: n}), the
// page-tracker resource inventory ({content, resources}) and its changes between two revisions, and the size of a
// change from the API's unified diff. Pure functions: no DOM, no React (unit-tested).

/** The text a revision is compared and downloaded as: strings as they are, anything else as pretty JSON. */
export function revisionText(data: unknown): string {
  return typeof data === "string" ? data : JSON.stringify(data, null, 2);
}

/** Whether the text is a JSON document (for the file extension and the editor's highlighting). */
export function isJsonData(data: unknown): boolean {
  return typeof data !== "string";
}

/** The number a revision stands for: a number, a numeric string, or an object's numeric `value`. */
export function numericValue(data: unknown): number | undefined {
  if (typeof data === "number" && Number.isFinite(data)) return data;
  if (typeof data === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(data)) return Number(data);
  if (typeof data === "object" && data !== null && !Array.isArray(data)) {
    const rec = data as Record<string, unknown>;
    if ("resources" in rec && "content" in rec) return numericValue(rec.content);
    if (typeof rec.value === "number" && Number.isFinite(rec.value)) return rec.value;
  }
  return undefined;
}

/** Points to chart, oldest first, when at least two revisions are numeric and none of the others is not. */
export function numericSeries(
  revisions: { id: string; createdAt: number | string; data: unknown }[],
): { id: string; at: number; value: number }[] | undefined {
  const points = revisions.map((r) => ({ id: r.id, at: Number(r.createdAt), value: numericValue(r.data) }));
  if (points.length < 2 || points.some((p) => p.value === undefined)) return undefined;
  // The list is newest first; revisions of the same second keep that order, reversed (a stable sort by time).
  return points
    .map((p) => ({ ...p, value: p.value! }))
    .reverse()
    .sort((a, b) => a.at - b.at);
}

export interface Resource {
  url: string;
  type: string;
  size: number;
  sha256: string;
}

/** The inventory of a page tracker revision stored with `resources: true`, else undefined. */
export function resourcesOf(data: unknown): { content: unknown; resources: Resource[] } | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const rec = data as Record<string, unknown>;
  if (!("content" in rec) || !Array.isArray(rec.resources)) return undefined;
  const resources = rec.resources.filter(
    (r): r is Resource =>
      typeof r === "object" && r !== null && typeof (r as Resource).url === "string" && typeof (r as Resource).sha256 === "string",
  );
  return { content: rec.content, resources };
}

export type ResourceChange =
  | { change: "added"; url: string; type: string; after: Resource }
  | { change: "removed"; url: string; type: string; before: Resource }
  | { change: "changed"; url: string; type: string; before: Resource; after: Resource };

/** What changed in the inventory from `before` to `after`, by URL and type; unchanged entries are only counted. */
export function diffResources(before: Resource[], after: Resource[]): { changes: ResourceChange[]; unchanged: number } {
  const key = (r: Resource) => `${r.type} ${r.url}`;
  const old = new Map(before.map((r) => [key(r), r]));
  const changes: ResourceChange[] = [];
  let unchanged = 0;
  for (const a of after) {
    const b = old.get(key(a));
    old.delete(key(a));
    if (!b) changes.push({ change: "added", url: a.url, type: a.type, after: a });
    else if (b.sha256 !== a.sha256 || b.size !== a.size) changes.push({ change: "changed", url: a.url, type: a.type, before: b, after: a });
    else unchanged++;
  }
  for (const b of old.values()) changes.push({ change: "removed", url: b.url, type: b.type, before: b });
  const order = { changed: 0, added: 1, removed: 2 };
  changes.sort((x, y) => order[x.change] - order[y.change] || x.type.localeCompare(y.type) || x.url.localeCompare(y.url));
  return { changes, unchanged };
}

/** Lines added and removed according to a unified diff (headers and hunk markers not counted). */
export function changeSize(diff: string | undefined): { added: number; removed: number } | undefined {
  if (diff === undefined) return undefined;
  let added = 0;
  let removed = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---")) continue;
    if (line.startsWith("+")) added++;
    else if (line.startsWith("-")) removed++;
  }
  return { added, removed };
}

/** A file name for downloading a revision: "<tracker>-<UTC date-time>.json|.txt", safe on every file system. */
export function revisionFileName(trackerName: string, createdAt: number | string, data: unknown): string {
  const stamp = new Date(Number(createdAt) * 1000)
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/:/g, "-");
  const base =
    trackerName
      .replace(/[^\w.-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 80) || "revision";
  return `${base}-${stamp}.${isJsonData(data) ? "json" : "txt"}`;
}
