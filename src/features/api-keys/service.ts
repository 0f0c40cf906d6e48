// API keys: `sbx_ak_` + 64 hex tokens, stored as SHA-256, shown once (supplement §5).
import type { AuthUser, IdentityLookup } from "../../platform/auth/principal";
import { randomHex, sha256Hex } from "../../platform/crypto/tokens";
import { duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import type { LooseInput } from "../../platform/http/contract";
import { futureTimestamp, normalizeName, pathId, required } from "../../platform/core/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { UsersService } from "../users/service";
import type { ApiKeyCreateParams, ApiKeyCreateResponse, ApiKeyRegenerateParams, UserApiKey } from "./contract";
import { API_KEY_NAME_MAX as NAME_MAX, MAX_API_KEYS } from "./shared-rules";
import { apiKeysStore, toUserApiKey as toWire, type ApiKeyRow } from "./store";

const LAST_USED_RESOLUTION_SEC = 60;
const TOKEN_PREFIX = "sbx_ak_";

const newToken = () => `${TOKEN_PREFIX}${randomHex(32)}`;

export class ApiKeysService implements Pick<IdentityLookup, "byApiKeyHash"> {
  constructor(
    private readonly rt: Runtime,
    private readonly users: UsersService,
  ) {}

  private now() {
    return nowSec(this.rt.clock);
  }

  async byApiKeyHash(hash: string): Promise<{ user: AuthUser; apiKeyId: string } | undefined> {
    const key = await apiKeysStore.byHash(this.rt.db, hash);
    const now = this.now();
    if (!key || (key.expires_at !== null && key.expires_at <= now)) return undefined;
    const row = await this.users.getRow(key.user_id);
    if (!row) return undefined;
    if (key.last_used_at === null || now - key.last_used_at >= LAST_USED_RESOLUTION_SEC) await apiKeysStore.touch(this.rt.db, key.id, now);
    return { user: this.users.toAuthUser(row), apiKeyId: key.id };
  }

  /** `expiresAt` of a create request: absent or null = never; otherwise an integer in the future. */
  private createExpiry(raw: unknown): number | null {
    return raw === undefined || raw === null ? null : futureTimestamp(raw, this.now(), "expiresAt");
  }

  async list(userId: string): Promise<UserApiKey[]> {
    return (await apiKeysStore.list(this.rt.db, userId)).map(toWire);
  }

  /** POST /api/user/api_keys. */
  create(userId: string, body: LooseInput<typeof ApiKeyCreateParams>): Promise<ApiKeyCreateResponse> {
    return this.createForUser(userId, required(body.name, "name"), body.expiresAt);
  }

  /**
   * Creates a key for a user (own keys, the operator route and the CLI). Order: values (400) → unknown
   * user (404) → limit (400 LIMIT_REACHED) → duplicate name (409).
   */
  async createForUser(userId: string, rawName: unknown, rawExpiresAt?: unknown): Promise<ApiKeyCreateResponse> {
    const name = normalizeName(rawName, NAME_MAX);
    const expiresAt = this.createExpiry(rawExpiresAt);
    if (!(await this.users.getRow(userId))) throw notFound("User");
    const token = newToken();
    const id = newId();
    const now = this.now();
    try {
      await this.rt.db.tx(async (tx) => {
        if ((await apiKeysStore.count(tx, userId)) >= MAX_API_KEYS) throw limitReached(`At most ${MAX_API_KEYS} API keys per user`);
        if (await apiKeysStore.byName(tx, userId, name)) throw duplicateName("API key", name);
        await apiKeysStore.insert(tx, { id, userId, name, tokenHash: sha256Hex(token), now, expiresAt });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("API key", name);
      throw err;
    }
    return { ...toWire((await apiKeysStore.byId(this.rt.db, userId, id))!), token };
  }

  /** Operator route: a key for the user in the path (unknown or malformed id → 404). */
  createForPathUser(rawUserId: string | undefined, body: LooseInput<typeof ApiKeyCreateParams>): Promise<ApiKeyCreateResponse> {
    const name = normalizeName(required(body.name, "name"), NAME_MAX);
    const expiresAt = this.createExpiry(body.expiresAt);
    return this.createForUser(pathId(rawUserId, "User"), name, expiresAt);
  }

  private async own(userId: string, rawId: string | undefined): Promise<ApiKeyRow> {
    const row = await apiKeysStore.byId(this.rt.db, userId, pathId(rawId, "API key"));
    if (!row) throw notFound("API key");
    return row;
  }

  async rename(userId: string, rawId: string | undefined, rawName: unknown): Promise<UserApiKey> {
    const name = normalizeName(required(rawName, "name"), NAME_MAX);
    const key = await this.own(userId, rawId);
    if (name !== key.name) {
      const taken = await apiKeysStore.byName(this.rt.db, userId, name);
      if (taken && taken.id !== key.id) throw duplicateName("API key", name);
      try {
        await apiKeysStore.rename(this.rt.db, userId, key.id, name, this.now());
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicateName("API key", name);
        throw err;
      }
    }
    return toWire((await apiKeysStore.byId(this.rt.db, userId, key.id))!);
  }

  async remove(userId: string, rawId: string | undefined): Promise<void> {
    const key = await this.own(userId, rawId);
    await apiKeysStore.remove(this.rt.db, userId, key.id);
  }

  /**
   * New token; the old one stops working at once and `lastUsedAt` starts over. `expiresAt`: absent keeps
   * the current expiry, null removes it, an integer replaces it; a resulting expiry in the past → 400.
   */
  async regenerate(userId: string, rawId: string | undefined, body: LooseInput<typeof ApiKeyRegenerateParams>): Promise<ApiKeyCreateResponse> {
    const now = this.now();
    const raw = body.expiresAt;
    const given = raw === undefined || raw === null ? raw : futureTimestamp(raw, now, "expiresAt");
    const key = await this.own(userId, rawId);
    const expiresAt = given === undefined ? key.expires_at : given;
    if (expiresAt !== null && expiresAt <= now) throw invalid("expiresAt: the key's current expiry has passed; give a new one or null");
    const token = newToken();
    await apiKeysStore.regenerate(this.rt.db, userId, key.id, sha256Hex(token), expiresAt, now);
    return { ...toWire((await apiKeysStore.byId(this.rt.db, userId, key.id))!), token };
  }
}
