import { api, call } from "../../api/client";
import type { ApiKey, ApiKeyCreated } from "../../api/types";

export const apiKeysApi = {
  list: () => call(api.GET("/api/user/api_keys")),
  create: (body: { name: string; expiresAt?: number }) => call(api.POST("/api/user/api_keys", { body })),
  rename: (id: string, name: string) => call(api.PUT("/api/user/api_keys/{api_key_id}", { params: { path: { api_key_id: id } }, body: { name } })),
  /** A new token; the old one stops working at once. The expiry is kept. */
  regenerate: (id: string) => call(api.POST("/api/user/api_keys/{api_key_id}/_regenerate", { params: { path: { api_key_id: id } }, body: {} })),
  remove: (id: string) => call(api.DELETE("/api/user/api_keys/{api_key_id}", { params: { path: { api_key_id: id } } })),
};

export const API_KEYS_KEY = ["api-keys"] as const;

/** Expiry choices: a number of days from now, or a date picked by the user, or never. */
export const EXPIRY_OPTIONS = [
  { value: "never", label: "Never expires" },
  { value: "7", label: "In 7 days" },
  { value: "30", label: "In 30 days" },
  { value: "90", label: "In 90 days" },
  { value: "365", label: "In one year" },
  { value: "date", label: "On a date…" },
];

/** Unix seconds for an expiry choice; undefined = never; null = invalid. */
export function expiryFor(choice: string, date: string, now = Date.now()): number | undefined | null {
  if (choice === "never") return undefined;
  if (choice === "date") {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
    if (!m) return null;
    // The end of the chosen day, local time.
    const t = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59).getTime();
    return t > now ? Math.floor(t / 1000) : null;
  }
  return Math.floor(now / 1000) + Number(choice) * 86_400;
}

export type { ApiKey, ApiKeyCreated };
