// The script library's API calls, and the library as the script fields' "Copy from your scripts" menu lists it.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import type { ListQuery, Script, ScriptListItem, ScriptType } from "../../api/types";

export const scriptsApi = {
  list: (query: ListQuery) => call(api.GET("/api/user/scripts", { params: { query } })),
  get: (id: string) => call(api.GET("/api/user/scripts/{script_id}", { params: { path: { script_id: id } } })),
  create: (body: { name: string; scriptType: ScriptType; content: string; tagIds: string[] }) => call(api.POST("/api/user/scripts", { body })),
  update: (id: string, body: { name?: string; content?: string; tagIds?: string[] }) =>
    call(api.PUT("/api/user/scripts/{script_id}", { params: { path: { script_id: id } }, body })),
  remove: (id: string) => call(api.DELETE("/api/user/scripts/{script_id}", { params: { path: { script_id: id } } })),
};

/** The user's scripts usable in `context` (first 100 by name), for a script field's "Copy from your scripts". */
export function useScriptLibrary(context: "responder") {
  return useQuery({
    queryKey: ["scripts", "list", { context }],
    queryFn: async () => (await call(api.GET("/api/user/scripts", { params: { query: { context, pageSize: 100, sort: "name" } } }))).items,
  });
}

export type { Script, ScriptListItem, ScriptType };
