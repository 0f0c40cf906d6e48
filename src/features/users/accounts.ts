// Users slice, accounts (supplement §3): the user rows every other group of UsersService builds on. Creating an
// account — `create({emailProof})` is the one way for a service to create a proven user (supplement §3.5, see
// service.ts) —, the effective tier, the wire `User` and platform/auth's AuthUser of a row, the row lookups, and
// recording a proof of the login email. UsersService (service.ts) is this class extended by sessions.ts,
// recovery.ts and the operator administration in service.ts.
import { TIERS, type Tier } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import { ApiError, invalid, isUniqueViolation } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { charLength, normalizeEmail } from "../../platform/core/validate";
import { hashPassword } from "../../platform/crypto/passwords";
import { randomBase64Url, randomHex } from "../../platform/crypto/tokens";
import type { Db } from "../../platform/db/db";
import type { Outbox } from "../../platform/mail/outbox";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { User } from "./contract";
import { HANDLE_RE, PASSWORD_MAX, PASSWORD_MIN, RESERVED_HANDLES } from "./shared-rules";
import { toUser, usersStore, type EmailProof, type UserRow } from "./store";

export type { EmailProof } from "./store";

export interface CreateUserInput {
  email: unknown;
  password?: unknown;
  handle?: unknown;
  activated?: boolean;
  tier?: Tier;
  /**
   * Pass only when the way this account is created proves the email (supplement §3.5): `cli` (`users add`),
   * `operator` (operator sign-up), `clone` (operator clone). Absent = not proven: the account gets no operator
   * rights from a listed email until a recovery link or verification code proves it.
   */
  emailProof?: Extract<EmailProof, "cli" | "operator" | "clone">;
}

/** Extra cleanup run inside the removal transaction (e.g. a feature cancelling scheduled runs). */
export type UserRemovalHook = (tx: Db, userId: string) => Promise<void>;

export function checkPassword(raw: unknown, field = "password"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const len = charLength(raw);
  if (len < PASSWORD_MIN || len > PASSWORD_MAX)
    throw new ApiError(400, "WEAK_PASSWORD", `${field}: must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  return raw;
}

/** Accounts: rows, creation, tiers, email proof. The base of UsersService. */
export class UserAccounts {
  /** Cleanup other features register for user removal (service.ts onUserRemoved). */
  protected readonly removalHooks: UserRemovalHook[] = [];

  constructor(
    protected readonly rt: Runtime,
    protected readonly outbox: Outbox,
  ) {}

  protected now() {
    return nowSec(this.rt.clock);
  }

  effectiveTier(row: UserRow): Tier {
    if (row.tier_ends_at !== null && row.tier_ends_at <= this.now()) return this.rt.config.subscriptions.default_tier;
    return row.tier;
  }

  /** The wire `User` of a row (store.ts maps it; `isOperator` needs this server's operator list). */
  toUser(row: UserRow): User {
    return toUser(row, this.rt.config.security.operators);
  }

  toAuthUser(row: UserRow): AuthUser {
    return {
      id: row.id,
      email: row.email,
      handle: row.handle,
      isActivated: row.is_activated === 1,
      tier: this.effectiveTier(row),
      emailProven: row.email_proven_at !== null,
    };
  }

  /** A requested handle's format (supplement §4.1), a body value: undefined when absent, else the handle or a 400
   *  naming `field`. Whether it is taken is create's check (stored data). */
  checkHandle(raw: unknown, field = "handle"): string | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== "string" || !HANDLE_RE.test(raw) || (RESERVED_HANDLES as readonly string[]).includes(raw))
      throw invalid(`${field}: must match ${HANDLE_RE.source} and not be ${RESERVED_HANDLES.slice(0, -1).join(", ")} or ${RESERVED_HANDLES.at(-1)}`);
    return raw;
  }

  async create(input: CreateUserInput): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const password = input.password === undefined || input.password === null ? undefined : checkPassword(input.password);
    const handle = this.checkHandle(input.handle);
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
          emailProof: input.emailProof ?? null,
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

  /** The user's row; pass the caller's transaction to read inside it (a pooled connection is not taken twice). */
  getRow = (id: string, db: Db = this.rt.db) => usersStore.byId(db, id);
  getRowByHandle = (handle: string) => usersStore.byHandle(this.rt.db, handle);
  getRowByEmail = (email: string) => usersStore.byEmail(this.rt.db, email.trim().toLowerCase());
  getRowByUnsubscribeToken = (token: string) => usersStore.byUnsubscribeToken(this.rt.db, token);

  /**
   * Records that the user proved control of `address` (a verification code sent to it, supplement §10.2), when
   * it is the login email; a user already proven keeps the earlier proof. Returns whether the email is now proven.
   */
  async recordEmailProof(userId: string, address: string, proof: Extract<EmailProof, "code">): Promise<boolean> {
    const row = await usersStore.byId(this.rt.db, userId);
    if (!row || row.email !== address.trim().toLowerCase()) return row?.email_proven_at != null;
    await usersStore.recordEmailProof(this.rt.db, userId, proof, this.now());
    return true;
  }
}
