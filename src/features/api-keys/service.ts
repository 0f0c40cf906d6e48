// API keys: `sbx_ak_` + 64 hex tokens, stored as SHA-256, shown once (supplement §5).
import type { AuthUser, IdentityLookup } from "../../platform/auth/principal";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { UsersService } from "../users/service";
import { apiKeysStore } from "./store";

const LAST_USED_RESOLUTION_SEC = 60;

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
}
