// Users and identity: accounts, passwords, sessions, recovery, operator administration, subscriptions.
import { TIERS, type Tier } from "../../config/schema";
import type { AuthUser, IdentityLookup } from "../../platform/auth/principal";
import { isOperatorIdentity } from "../../platform/auth/principal";
import { hashPassword } from "../../platform/crypto/passwords";
import { randomBase64Url, randomHex, sha256Hex } from "../../platform/crypto/tokens";
import { invalid, isUniqueViolation, ApiError } from "../../platform/http/errors";
import { newId } from "../../platform/http/ids";
import { normalizeEmail } from "../../platform/http/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import { usersStore, type UserRow } from "./store";

export interface User {
  id: string;
  email: string;
  handle: string;
  createdAt: number;
  isActivated: boolean;
  isOperator: boolean;
  subscription: { tier: Tier; startedAt: number; endsAt?: number };
}

export interface CreateUserInput {
  email: unknown;
  password?: unknown;
  handle?: unknown;
  activated?: boolean;
  tier?: Tier;
}

const HANDLE_RE = /^[a-z0-9]{3,26}$/;
const RESERVED_HANDLES = new Set(["api", "www", "responders"]);
const SESSION_REFRESH_AFTER_SEC = 3600;

export function checkPassword(raw: unknown, field = "password"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  if (raw.length < 8 || raw.length > 1024) throw new ApiError(400, "WEAK_PASSWORD", `${field}: must be 8 to 1024 characters`);
  return raw;
}

/** Implements the session and email parts of platform/auth's IdentityLookup (API keys: ApiKeysService). */
export class UsersService implements Omit<IdentityLookup, "byApiKeyHash"> {
  constructor(private readonly rt: Runtime) {}

  private now() {
    return nowSec(this.rt.clock);
  }

  effectiveTier(row: UserRow): Tier {
    if (row.tier_ends_at !== null && row.tier_ends_at <= this.now()) return this.rt.config.subscriptions.default_tier;
    return row.tier;
  }

  toUser(row: UserRow): User {
    return {
      id: row.id,
      email: row.email,
      handle: row.handle,
      createdAt: row.created_at,
      isActivated: row.is_activated === 1,
      isOperator: isOperatorIdentity(this.rt.config.security.operators, row.email, undefined),
      subscription: { tier: row.tier, startedAt: row.tier_started_at, ...(row.tier_ends_at !== null ? { endsAt: row.tier_ends_at } : {}) },
    };
  }

  toAuthUser(row: UserRow): AuthUser {
    return { id: row.id, email: row.email, handle: row.handle, isActivated: row.is_activated === 1, tier: this.effectiveTier(row) };
  }

  async create(input: CreateUserInput): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const password = input.password === undefined || input.password === null ? undefined : checkPassword(input.password);
    let handle: string | undefined;
    if (input.handle !== undefined && input.handle !== null) {
      if (typeof input.handle !== "string" || !HANDLE_RE.test(input.handle) || RESERVED_HANDLES.has(input.handle))
        throw invalid("handle: must match ^[a-z0-9]{3,26}$ and not be api, www or responders");
      handle = input.handle;
    }
    const tier = input.tier ?? this.rt.config.subscriptions.default_tier;
    if (!TIERS.includes(tier)) throw invalid("tier: unknown tier");
    const db = this.rt.db;
    if (await usersStore.byEmail(db, email)) throw new ApiError(400, "EMAIL_TAKEN", "email: already registered");
    if (handle && (await usersStore.byHandle(db, handle))) throw new ApiError(400, "HANDLE_TAKEN", "handle: already in use");
    const passwordHash = password === undefined ? null : await hashPassword(password);
    const id = newId();
    for (let attempt = 0; ; attempt++) {
      try {
        await usersStore.insert(db, {
          id,
          email,
          handle: handle ?? randomHex(8),
          passwordHash,
          isActivated: input.activated ?? true,
          tier,
          unsubscribeToken: randomBase64Url(24),
          now: this.now(),
        });
        break;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (String((err as Error).message).includes("email")) throw new ApiError(400, "EMAIL_TAKEN", "email: already registered");
        if (handle || attempt > 5) throw new ApiError(400, "HANDLE_TAKEN", "handle: already in use");
      }
    }
    return (await usersStore.byId(db, id))!;
  }

  getRow = (id: string) => usersStore.byId(this.rt.db, id);
  getRowByEmail = (email: string) => usersStore.byEmail(this.rt.db, email.trim().toLowerCase());

  // IdentityLookup (platform/auth)
  async byEmail(email: string) {
    const row = await this.getRowByEmail(email);
    return row ? this.toAuthUser(row) : undefined;
  }

  async bySessionHash(hash: string) {
    const now = this.now();
    const session = await usersStore.sessionByHash(this.rt.db, hash, now);
    if (!session) return undefined;
    const row = await usersStore.byId(this.rt.db, session.user_id);
    if (!row) return undefined;
    let refreshed = false;
    if (now - session.refreshed_at > SESSION_REFRESH_AFTER_SEC) {
      await usersStore.refreshSession(this.rt.db, session.id, now, now + this.rt.config.security.session_ttl);
      refreshed = true;
    }
    return { user: this.toAuthUser(row), sessionId: session.id, refreshed };
  }

  /** A new session for the user; returns the cookie token (only its hash is stored). */
  async createSession(userId: string): Promise<string> {
    const token = randomBase64Url(32);
    const now = this.now();
    await usersStore.insertSession(this.rt.db, { id: newId(), userId, tokenHash: sha256Hex(token), now, expiresAt: now + this.rt.config.security.session_ttl });
    return token;
  }
}
