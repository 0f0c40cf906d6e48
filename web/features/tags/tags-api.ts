import { api, call } from "../../api/client";
import type { ListQuery, Tag } from "../../api/types";

export const tagsApi = {
  list: (query: ListQuery) => call(api.GET("/api/user/tags", { params: { query } })),
  get: (id: string) => call(api.GET("/api/user/tags/{tag_id}", { params: { path: { tag_id: id } } })),
  create: (body: { name: string; color: string }) => call(api.POST("/api/user/tags", { body })),
  update: (id: string, body: { name?: string; color?: string }) =>
    call(api.PUT("/api/user/tags/{tag_id}", { params: { path: { tag_id: id } }, body })),
  remove: (id: string) => call(api.DELETE("/api/user/tags/{tag_id}", { params: { path: { tag_id: id } } })),
};

export type { Tag };
