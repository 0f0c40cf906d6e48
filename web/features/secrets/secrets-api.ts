import { api, call } from "../../api/client";
import type { ListQuery, Secret } from "../../api/types";

export const secretsApi = {
  list: (query: ListQuery) => call(api.GET("/api/user/secrets", { params: { query } })),
  get: (id: string) => call(api.GET("/api/user/secrets/{secret_id}", { params: { path: { secret_id: id } } })),
  create: (body: { name: string; value: string; tagIds: string[] }) => call(api.POST("/api/user/secrets", { body })),
  /** The value is replaced only when given: it is write-only and never comes back. */
  update: (id: string, body: { value?: string; tagIds?: string[] }) => call(api.PUT("/api/user/secrets/{secret_id}", { params: { path: { secret_id: id } }, body })),
  remove: (id: string) => call(api.DELETE("/api/user/secrets/{secret_id}", { params: { path: { secret_id: id } } })),
};

export type { Secret };
