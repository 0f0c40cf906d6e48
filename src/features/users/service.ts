// Users and identity: accounts, passwords, sessions, recovery, operator administration, subscriptions
// (supplement §3, §4).
//
// Operator rights need proof of the email (supplement §3.5): a listed email makes a user an operator only once
// `users.email_proven_at` is set. Proof is recorded when the account is created by the CLI, an operator or a
// clone (`create({emailProof})`: the one way for a service to create a proven user), when a recovery token is
// consumed (the link went to the address, or was handed out by the CLI or an operator), and when the
// notification-email flow verifies a code sent to the login email (`recordEmailProof`). Public sign-up proves
// nothing: with a listed email it creates an ordinary account and emails a verification link (a recovery token,
// `{public_url}/recover?token=…`), or answers 403 SIGNUP_RESERVED when mail is not configured.
//
// UsersService is built in layers, one file per group: accounts.ts (rows, creation, tiers, email proof) ⊂
// sessions.ts (identity lookup, sessions, cookies, sign-in) ⊂ recovery.ts (public sign-up, recovery links) ⊂ this
// file (operator administration, removal, subscriptions). Other modules import UsersService from here only.
import { TIERS, type Tier } from "../../config/schema";
import type { IdentityLookup } from "../../platform/auth/principal";
import { invalid, notFound } from "../../platform/core/errors";
import { futureTimestamp, normalizeEmail, pathId, required } from "../../platform/core/validate";
import type { LooseInput } from "../../platform/http/contract";
import type { UserRemovalHook } from "./accounts";
import type { SignupParams, User } from "./contract";
import { UserRecovery } from "./recovery";
import { usersStore } from "./store";

export { checkPassword, type CreateUserInput, type EmailProof, type UserRemovalHook } from "./accounts";
export { SIGNUP_VERIFY_TTL_SEC } from "./recovery";
export type { SignedIn } from "./sessions";

/** The users slice's service. Implements the session and email parts of platform/auth's IdentityLookup (API keys:
 *  ApiKeysService). */
export class UsersService extends UserRecovery implements Omit<IdentityLookup, "byApiKeyHash"> {
  // Operator administration (supplement §4.2)

  async self(userId: string): Promise<User> {
    const row = await usersStore.byId(this.rt.db, userId);
    if (!row) throw notFound("User");
    return this.toUser(row);
  }

  async getById(rawId: string | undefined): Promise<User> {
    const row = await usersStore.byId(this.rt.db, pathId(rawId, "User"));
    if (!row) throw notFound("User");
    return this.toUser(row);
  }

  async getByEmail(rawEmail: unknown): Promise<User> {
    if (rawEmail === undefined || rawEmail === "") throw invalid("email: is required");
    const row = await usersStore.byEmail(this.rt.db, normalizeEmail(rawEmail));
    if (!row) throw notFound("User");
    return this.toUser(row);
  }

  /** Operator sign-up: `activated` defaults to true; without a password only a recovery token lets the user in. */
  async adminSignup(input: LooseInput<typeof SignupParams>): Promise<User> {
    const email = required(input.email, "email");
    if (input.activated !== undefined && input.activated !== null && typeof input.activated !== "boolean")
      throw invalid("activated: must be a boolean");
    const row = await this.create({
      email,
      password: input.password,
      handle: input.handle,
      activated: input.activated ?? true,
      emailProof: "operator",
    });
    return this.toUser(row);
  }

  /** Registers extra cleanup for user removal (runs inside the removal transaction). */
  onUserRemoved(hook: UserRemovalHook): void {
    this.removalHooks.push(hook);
  }

  /** Every user, oldest first (CLI `users list`). */
  async listUsers(): Promise<User[]> {
    return (await usersStore.list(this.rt.db)).map((row) => this.toUser(row));
  }

  /** Deletes the user and everything they own in one transaction; false when there was no such user. */
  async removeUser(userId: string): Promise<boolean> {
    return this.rt.db.tx(async (tx) => {
      for (const hook of this.removalHooks) await hook(tx, userId);
      return usersStore.remove(tx, userId);
    });
  }

  async removeById(rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "User");
    if (!(await this.removeUser(id))) throw notFound("User");
  }

  /** Removal by email; an unknown email is not an error. */
  async removeByEmail(rawEmail: unknown): Promise<boolean> {
    const row = await usersStore.byEmail(this.rt.db, normalizeEmail(required(rawEmail, "email")));
    return row ? this.removeUser(row.id) : false;
  }

  /** `startedAt` becomes now when the tier changes (kept otherwise); an absent `endsAt` removes it. */
  async setSubscription(rawEmail: unknown, rawSubscription: unknown): Promise<void> {
    const email = normalizeEmail(required(rawEmail, "userEmail"), "userEmail");
    const subscription = required(rawSubscription, "subscription");
    if (typeof subscription !== "object" || Array.isArray(subscription)) throw invalid("subscription: must be an object {tier, endsAt?}");
    const { tier: rawTier, endsAt: rawEndsAt } = subscription as { tier?: unknown; endsAt?: unknown };
    const tier = required(rawTier, "subscription.tier");
    if (typeof tier !== "string" || !(TIERS as readonly string[]).includes(tier))
      throw invalid(`subscription.tier: must be one of ${TIERS.join(", ")}`);
    const now = this.now();
    const endsAt = rawEndsAt === undefined || rawEndsAt === null ? null : futureTimestamp(rawEndsAt, now, "subscription.endsAt");
    const row = await usersStore.byEmail(this.rt.db, email);
    if (!row) throw notFound("User");
    const startedAt = row.tier === tier ? row.tier_started_at : now;
    await usersStore.setSubscription(this.rt.db, row.id, tier as Tier, startedAt, endsAt, now);
  }

  /** Clone (features/user-data): the destination takes the source's stored subscription as it is. */
  async copySubscription(fromId: string, toId: string): Promise<void> {
    const from = await usersStore.byId(this.rt.db, fromId);
    if (!from) throw notFound("User");
    await usersStore.setSubscription(this.rt.db, toId, from.tier, from.tier_started_at, from.tier_ends_at, this.now());
  }
}
