// UUID helpers: ids are UUID v7 lower-case text (supplement §1).
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID_RE.test(value);
export const newId = () => Bun.randomUUIDv7();
