// The secrets slice's API calls, and every secret's name and id for pickers (values never leave the server).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { allPages } from "../../components/tags/use-all-tags";
import type { ListQuery, Secret } from "../../api/types";

export const secretsApi = {
  list: (query: ListQuery) => call(api.GET("/api/user/secrets", { params: { query } })),
  get: (id: string) => call(api.GET("/api/user/secrets/{secret_id}", { params: { path: { secret_id: id } } })),
  create: (body: { name: string; value: string; tagIds: string[] }) => call(api.POST("/api/user/secrets", { body })),
  /** The value is replaced only when given: it is write-only and never comes back. */
  update: (id: string, body: { value?: string; tagIds?: string[] }) =>
    call(api.PUT("/api/user/secrets/{secret_id}", { params: { path: { secret_id: id } }, body })),
  remove: (id: string) => call(api.DELETE("/api/user/secrets/{secret_id}", { params: { path: { secret_id: id } } })),
};

/** The user's secrets (names and ids only) for the secrets-access picker: every page of 100 (the API's maximum). */
export function useAllSecrets() {
  return useQuery({
    queryKey: ["secrets", "all"],
    queryFn: () => allPages(async (page, pageSize) => call(api.GET("/api/user/secrets", { params: { query: { page, pageSize, sort: "name" } } }))),
  });
}

export type { Secret };
