// The user's secrets (names and ids only; values never leave the server) for the secrets-access picker: every page
// of 100 (the API's maximum page size).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { allPages } from "../../components/tags/use-all-tags";

export function useAllSecrets() {
  return useQuery({
    queryKey: ["secrets", "all"],
    queryFn: () => allPages(async (page, pageSize) => call(api.GET("/api/user/secrets", { params: { query: { page, pageSize, sort: "name" } } }))),
  });
}
