// All the user's tags (for pickers and filters): one page of 100, the API's maximum page size and the default
// per-user tag limit (supplement §22).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import type { Tag } from "../../api/types";

export const TAGS_KEY = "tags";

export function useAllTags() {
  return useQuery<Tag[]>({
    queryKey: [TAGS_KEY, "all"],
    queryFn: async () => (await call(api.GET("/api/user/tags", { params: { query: { pageSize: 100, sort: "name" } } }))).items,
  });
}
