// The common list query (interface "Common list query parameters", supplement §1), parsed once for every
// list endpoint. The SQL side lives in platform/db/list.ts.
import { t } from "elysia";
import { invalid } from "./errors";
import { isUuid } from "./ids";

export interface ListQuery {
  page: number;
  pageSize: number;
  sort: string;
  order: "asc" | "desc";
  q: string;
  tags: string[];
  globalTags: string[];
}

/** Query schema for the OpenAPI document; values are validated by parseListQuery. */
export const ListQuerySchema = t.Object({
  page: t.Optional(t.String({ description: "zero-based page index, default 0" })),
  pageSize: t.Optional(t.String({ description: "items per page, default 15, at most 100" })),
  sort: t.Optional(t.String({ description: "name (default), createdAt, updatedAt, or an entity-specific key" })),
  order: t.Optional(t.String({ description: "asc (default) or desc" })),
  q: t.Optional(t.String({ description: "case-insensitive name substring, or an exact id" })),
  tags: t.Optional(t.String({ description: "comma-separated tag ids: items having ANY of them" })),
  globalTags: t.Optional(t.String({ description: "comma-separated tag ids: items having ALL of them" })),
});

const first = (v: unknown): string | undefined => (Array.isArray(v) ? first(v[0]) : typeof v === "string" ? v : undefined);

/** Largest page index honoured: any page past it is past every list's end anyway, and OFFSET stays a safe integer. */
export const MAX_PAGE = 1_000_000_000;
const MAX_PAGE_SIZE = 100;

/** A non-negative integer of any length (digits only), capped at `max`: huge values are valid, not errors. */
function nonNegativeInt(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const s = raw.trim();
  if (!/^\d+$/.test(s)) throw invalid(`${name}: must be a non-negative integer`);
  return Math.min(max, Number(s));
}

const idList = (raw: string | undefined) => [...new Set((raw ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(isUuid))];

export function parseListQuery(query: Record<string, unknown>, sortKeys: readonly string[] = ["name", "createdAt", "updatedAt"]): ListQuery {
  const sort = first(query.sort) ?? "";
  const order = (first(query.order) ?? "asc").trim() || "asc";
  if (order !== "asc" && order !== "desc") throw invalid("order: must be asc or desc");
  return {
    page: nonNegativeInt("page", first(query.page), 0, MAX_PAGE),
    pageSize: nonNegativeInt("pageSize", first(query.pageSize), 15, MAX_PAGE_SIZE),
    sort: sortKeys.includes(sort) ? sort : "name",
    order,
    q: (first(query.q) ?? "").trim().slice(0, 200),
    tags: idList(first(query.tags)),
    globalTags: idList(first(query.globalTags)),
  };
}
