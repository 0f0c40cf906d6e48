// The search slice's API call: one query over `POST /api/search` (supplement §20). A newer query cancels the older
// request (TanStack Query aborts it through its signal); a 429 (one search at a time per user) is retried after its
// Retry-After, never shown.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { api, ApiError, call } from "../../api/client";

const LIMIT = 50;

export function useSearch(query: string) {
  return useQuery({
    queryKey: ["search", query],
    queryFn: ({ signal }) => call(api.POST("/api/search", { body: { query, limit: LIMIT }, signal })),
    enabled: query !== "",
    placeholderData: keepPreviousData,
    staleTime: 10_000,
    retry: (n, err) => err instanceof ApiError && err.status === 429 && n < 4,
    retryDelay: (_n, err) => Math.min(2000, Math.max(100, (err instanceof ApiError && err.retryAfter ? err.retryAfter : 0.2) * 1000)),
  });
}
