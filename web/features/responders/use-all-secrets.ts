// The user's secrets (names and ids only; values never leave the server) for the secrets-access picker: one page
// of 100, the API's maximum page size and the default per-user secret limit (supplement §22).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";

export function useAllSecrets() {
  return useQuery({
    queryKey: ["secrets", "all"],
    queryFn: async () => (await call(api.GET("/api/user/secrets", { params: { query: { pageSize: 100, sort: "name" } } }))).items,
  });
}
