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
  /** The user proved control of `email` (supplement §3.5); only then can a listed email make them an operator. */
  emailProven: boolean;
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

/**
 * Whether `security.operators` lists this email or JWT subject (supplement §3.5): entries with `@` match an
 * email or subject ignoring case, others match a subject exactly. For a user's email, use isOperatorUser: a
 * listed email counts only once the user has proven control of it.
 */
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

/** `User.isOperator` and the operator rule for sessions: the email is listed and the user has proven it. */
export function isOperatorUser(operators: string[], user: { email: string; emailProven: boolean }): boolean {
  return user.emailProven && isOperatorIdentity(operators, user.email, undefined);
}
