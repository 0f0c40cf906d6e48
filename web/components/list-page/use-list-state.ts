// List state in the URL (design.md: page, sort, filters and the open dialog live in the URL, so a list view can be
// linked to, reloaded and stepped through with the back button):
//   ?page=2&size=25&sort=updatedAt&order=desc&q=prod&tags=<id>,<id>&match=all&edit=<id> | &create=1 | &duplicate=<id>
// `page` is 1-based here (0-based on the wire). Filters and paging push a history entry; typing in the search box
// replaces it.
import { useMemo } from "react";
import { useLocation, useSearch } from "wouter";
import type { ListQuery } from "../../api/types";

export const PAGE_SIZES = [15, 25, 50, 100];

export interface ListState {
  page: number;
  pageSize: number;
  sort: string;
  order: "asc" | "desc";
  q: string;
  tags: string[];
  match: "any" | "all";
  dialog: { mode: "create" } | { mode: "edit" | "duplicate"; id: string } | null;
}

export function parseListState(search: string, sortable: readonly string[], defaultSort: string): ListState {
  const p = new URLSearchParams(search);
  const int = (k: string, d: number) => {
    const n = Number(p.get(k));
    return Number.isInteger(n) && n > 0 ? n : d;
  };
  const size = int("size", 15);
  const sort = p.get("sort") ?? "";
  const edit = p.get("edit");
  const duplicate = p.get("duplicate");
  return {
    page: int("page", 1),
    pageSize: PAGE_SIZES.includes(size) ? size : 15,
    sort: sortable.includes(sort) ? sort : defaultSort,
    order: p.get("order") === "desc" ? "desc" : "asc",
    q: p.get("q") ?? "",
    tags: (p.get("tags") ?? "").split(",").filter(Boolean),
    match: p.get("match") === "all" ? "all" : "any",
    dialog: edit
      ? { mode: "edit", id: edit }
      : duplicate
        ? { mode: "duplicate", id: duplicate }
        : p.get("create") === "1"
          ? { mode: "create" }
          : null,
  };
}

export function toSearch(s: ListState, defaultSort: string): string {
  const p = new URLSearchParams();
  if (s.page > 1) p.set("page", String(s.page));
  if (s.pageSize !== 15) p.set("size", String(s.pageSize));
  if (s.sort !== defaultSort) p.set("sort", s.sort);
  if (s.order !== "asc") p.set("order", s.order);
  if (s.q) p.set("q", s.q);
  if (s.tags.length) p.set("tags", s.tags.join(","));
  if (s.tags.length && s.match === "all") p.set("match", "all");
  if (s.dialog?.mode === "create") p.set("create", "1");
  if (s.dialog?.mode === "edit") p.set("edit", s.dialog.id);
  if (s.dialog?.mode === "duplicate") p.set("duplicate", s.dialog.id);
  const text = p.toString();
  return text ? `?${text}` : "";
}

/** The API query for a list state (supplement §1 list parameters). */
export function toListQuery(s: ListState): ListQuery {
  const q: ListQuery = { page: s.page - 1, pageSize: s.pageSize, sort: s.sort, order: s.order };
  if (s.q.trim()) q.q = s.q.trim();
  if (s.tags.length) q[s.match === "all" ? "globalTags" : "tags"] = s.tags.join(",");
  return q;
}

export function useListState(sortable: readonly string[], defaultSort = "name") {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const state = useMemo(() => parseListState(search, sortable, defaultSort), [search, sortable, defaultSort]);
  const update = (patch: Partial<ListState>, opts: { replace?: boolean } = {}) => {
    // Any change of what is listed starts again at the first page.
    const next = { ...state, ...patch };
    if (!("page" in patch) && ("q" in patch || "tags" in patch || "match" in patch || "sort" in patch || "order" in patch || "pageSize" in patch))
      next.page = 1;
    navigate(location + toSearch(next, defaultSort), { replace: opts.replace ?? false });
  };
  return [state, update] as const;
}
