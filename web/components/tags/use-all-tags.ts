// All the user's tags (for pickers and filters): every page of 100 (the API's maximum page size), so a user with
// more tags than one page sees them all (a tier may allow hundreds, supplement §22).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import type { Tag } from "../../api/types";

export const TAGS_KEY = "tags";

/** Every item of a list endpoint: pages of `size` until `total` is reached (or a page comes back short). */
export async function allPages<T>(fetchPage: (page: number, size: number) => Promise<{ items: T[]; total: number }>, size = 100): Promise<T[]> {
  const all: T[] = [];
  for (let page = 0; ; page++) {
    const { items, total } = await fetchPage(page, size);
    all.push(...items);
    if (items.length < size || all.length >= total) return all;
  }
}

export function useAllTags() {
  return useQuery<Tag[]>({
    queryKey: [TAGS_KEY, "all"],
    queryFn: () => allPages(async (page, pageSize) => call(api.GET("/api/user/tags", { params: { query: { page, pageSize, sort: "name" } } }))),
  });
}
