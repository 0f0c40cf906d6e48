// Who is calling. Resolved once per request in platform/auth from the first credential present
// (supplement §3.1): API key, JWT, or session cookie.
import type { Tier } from "../../config/schema";

export interface AuthUser {
  id: string;
  email: string;
  handle: string;
  isActivated: boolean;
  /** Effective tier: the stored tier, or the default tier once `endsAt` has passed. */
  tier: Tier;
}

export type AuthVia = "session" | "apiKey" | "jwt";

export interface Principal {
  via: AuthVia;
  /** Absent for a service-account JWT whose `sub` is not a user's email. */
  user?: AuthUser;
  /** JWT subject when via = jwt. */
  sub?: string;
  sessionId?: string;
  apiKeyId?: string;
  isOperator: boolean;
}

/** A principal that is known to carry a user (user-scoped routes). */
export type UserPrincipal = Principal & { user: AuthUser };

/** Looks credentials up in storage; implemented by the users and api-keys features, wired in app.ts. */
export interface IdentityLookup {
  /** A non-expired API key with this SHA-256 hash, and its (activated) user; refreshes `lastUsedAt`. */
  byApiKeyHash(hash: string): Promise<{ user: AuthUser; apiKeyId: string } | undefined>;
  /** A live session with this token hash; `refreshed` when the sliding expiry was moved (cookie re-sent). */
  bySessionHash(hash: string): Promise<{ user: AuthUser; sessionId: string; refreshed: boolean } | undefined>;
  byEmail(email: string): Promise<AuthUser | undefined>;
}

/** Operator rule (supplement §3.5). */
export function isOperatorIdentity(operators: string[], email: string | undefined, sub: string | undefined): boolean {
  for (const entry of operators) {
    if (entry.includes("@")) {
      const e = entry.toLowerCase();
      if (email && email.toLowerCase() === e) return true;
      if (sub && sub.toLowerCase() === e) return true;
    } else if (sub !== undefined && sub === entry) return true;
  }
  return false;
}
