// The common list query (interface "Common list query parameters", supplement §1), parsed once for every
// list endpoint. The SQL side lives in platform/db/list.ts.
import { t } from "elysia";
import { StringEnum, T } from "./contract";
import { invalid } from "../core/errors";
import { isUuid } from "../core/ids";

export interface ListQuery {
  page: number;
  pageSize: number;
  sort: string;
  order: "asc" | "desc";
  q: string;
  tags: string[];
  globalTags: string[];
}

/** Runtime query schema (values as sent); parseListQuery validates them with the spec's messages. */
export const ListQuerySchema = t.Object({
  page: t.Optional(t.String()),
  pageSize: t.Optional(t.String()),
  sort: t.Optional(t.String()),
  order: t.Optional(t.String()),
  q: t.Optional(t.String()),
  tags: t.Optional(t.String()),
  globalTags: t.Optional(t.String()),
});

const TagIdList = (description: string) =>
  T.String({
    description: `${description}; malformed entries are ignored`,
    examples: ["0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40,0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f41"],
  });

/**
 * The common list query of the contract (OpenAPI document): `page`/`pageSize` integers, `order` enum, the
 * entity's sort keys as examples (any other value falls back to `name`).
 */
export function listQueryParams(sortKeys: readonly string[] = ["name", "createdAt", "updatedAt"]) {
  return T.Object({
    page: T.Optional(T.Integer({ minimum: 0, description: "zero-based page index, default 0" })),
    pageSize: T.Optional(T.Integer({ minimum: 0, description: "items per page, default 15; values above 100 become 100; 0 returns only the total" })),
    // Any other value is not an error (it falls back to name), so the keys are examples, not an enum.
    sort: T.Optional(
      T.String({
        description: `${sortKeys.join(", ")}; default name, any other value falls back to name (names sort case-insensitively; ties by id)`,
        examples: [...sortKeys],
      }),
    ),
    order: T.Optional(StringEnum(["asc", "desc"], { description: "default asc" })),
    q: T.Optional(T.String({ description: "trimmed, at most 200 characters: case-insensitive name substring, or an exact id" })),
    tags: T.Optional(TagIdList("comma-separated tag ids: items having ANY of them (OR)")),
    globalTags: T.Optional(TagIdList("comma-separated tag ids: items having ALL of them (AND)")),
  });
}
export const ListQueryParams = listQueryParams();

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

const idList = (raw: string | undefined) => [
  ...new Set(
    (raw ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(isUuid),
  ),
];

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
