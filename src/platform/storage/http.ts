// The free-disk guard on the API (supplement §28): while the disk is low (disk.ts), a write that adds data answers
// 507 INSUFFICIENT_STORAGE before its handler runs; reads, deletes and the writes listed below keep working. A write
// is any POST/PUT/PATCH under /api: guarded unless its route is known not to add data (so a new route is guarded
// until someone says otherwise). openapi.ts declares the 507 on exactly the routes addsData() names.
import { Elysia } from "elysia";
import type { StorageQuota } from "./quota";

/** Actions (last path segment) that read, compute or delete: they add no stored data. `_history` may run a tracker
 *  (`refresh`): that run stores no revision while the disk is low, and the list still answers. */
const NON_ADDING_ACTIONS = new Set([
  "_export",
  "_import_preview",
  "_test",
  "_debug",
  "_fetch",
  "_evaluate",
  "_serialize",
  "_history",
  "_clear",
  "_clear_logs",
  "parse_schedule",
]);

/** Routes that must work on a full disk: signing in and out (to reach the deletes), search, removing a user. */
const NON_ADDING_ROUTES = new Set([
  "/api/auth/signin",
  "/api/auth/signout",
  "/api/auth/password",
  "/api/auth/recover",
  "/api/auth/forgot",
  "/api/search",
  "/api/users/remove",
  "/api/notifications/unsubscribe",
]);

/** True when a request of `method` to the route `route` (its path pattern) adds stored data. */
export function addsData(method: string, route: string): boolean {
  const m = method.toUpperCase();
  if (m !== "POST" && m !== "PUT" && m !== "PATCH") return false;
  if (!route.startsWith("/api/") || NON_ADDING_ROUTES.has(route)) return false;
  return !NON_ADDING_ACTIONS.has(route.slice(route.lastIndexOf("/") + 1));
}

/** Global hook: after the route's credentials are checked (its auth transform), before its handler. */
export function storageGuardPlugin(quota: StorageQuota) {
  return new Elysia({ name: "platform/storage" }).onBeforeHandle({ as: "global" }, ({ request, route }) => {
    if (quota.diskLow && addsData(request.method, route)) quota.assertDisk();
  });
}
