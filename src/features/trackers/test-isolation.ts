// Shared cross-user assertions for tracker kinds: another user gets 404 on every per-tracker endpoint and never
// sees the tracker in lists or the logs summary.
import { expect } from "bun:test";
import type { ApiClient } from "../../tests/harness";

export async function expectHiddenFromOtherUser(other: ApiClient, base: string, trackerId: string) {
  for (const [method, path] of [
    ["GET", `${base}/${trackerId}`],
    ["PUT", `${base}/${trackerId}`],
    ["DELETE", `${base}/${trackerId}`],
    ["POST", `${base}/${trackerId}/_history`],
    ["POST", `${base}/${trackerId}/_clear`],
    ["GET", `${base}/${trackerId}/_logs`],
    ["POST", `${base}/${trackerId}/_clear_logs`],
  ] as const) {
    const res = await other.request(method, path, method === "PUT" ? { body: { name: "stolen" } } : method === "POST" ? { body: {} } : {});
    expect({ path, method, status: res.status }).toEqual({ path, method, status: 404 });
  }
  expect((await other.get(base)).json).toEqual({ items: [], total: 0 });
  expect((await other.get(`${base}/_logs_summary`)).json).toEqual({});
  expect((await other.get(`${base}?q=${trackerId}`)).json.total).toBe(0);
}
