// Sharing (supplement §12.6): a resource's owner can share it; a request carrying the share id in
// `X-User-Share-ID` (alias `X-Secbox-Share-ID`) is then served as the owner for the shared operations only
// (template GET and _generate, policy GET and _serialize). Features plug in with `resolve` in their shared
// routes (declared `auth: "shared"`), `share`/`unshare`, and `remove` in their delete transaction.
import type { Db } from "../db/db";
import { notFound } from "../core/errors";
import { isUuid } from "../core/ids";
import { nowSec, type Clock } from "../runtime";
import type { Principal } from "./principal";
import { shareStore } from "./share-store";

export type ShareableType = "certificateTemplate" | "contentSecurityPolicy";

/** The resource key each type uses inside `UserShare.resource`. */
const RESOURCE_KEY: Record<ShareableType, string> = { certificateTemplate: "templateId", contentSecurityPolicy: "policyId" };

export interface UserShare {
  id: string;
  resource: { type: ShareableType } & Record<string, string>;
  createdAt: number;
}

/** Who a shared operation is served for. `viaShare` is true when a stranger reached it through the share. */
export interface SharedAccess {
  ownerId: string;
  viaShare: boolean;
}

export function shareIdFrom(request: Request): string | undefined {
  return request.headers.get("x-user-share-id") ?? request.headers.get("x-secbox-share-id") ?? undefined;
}

export class Shares {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private toWire(row: { id: string; resource_type: string; resource_id: string; created_at: number }): UserShare {
    const type = row.resource_type as ShareableType;
    return { id: row.id, resource: { type, [RESOURCE_KEY[type]]: row.resource_id } as UserShare["resource"], createdAt: row.created_at };
  }

  /** Idempotent: returns the existing share when there is one. The caller has checked ownership. */
  async share(ownerId: string, type: ShareableType, resourceId: string): Promise<UserShare> {
    await shareStore.insertIfAbsent(this.db, {
      id: crypto.randomUUID(),
      user_id: ownerId,
      resource_type: type,
      resource_id: resourceId,
      created_at: nowSec(this.clock),
    });
    return this.toWire((await shareStore.byResource(this.db, type, resourceId))!);
  }

  /** Deletes the share, if any; the caller has checked ownership (or ignores foreign ids, §12.3). */
  async unshare(type: ShareableType, resourceId: string): Promise<void> {
    await shareStore.remove(this.db, type, resourceId);
  }

  /** Removes a resource's share inside the resource's delete transaction. */
  remove(tx: Db, type: ShareableType, resourceId: string) {
    return shareStore.remove(tx, type, resourceId);
  }

  async forResource(type: ShareableType, resourceId: string): Promise<UserShare | undefined> {
    const row = await shareStore.byResource(this.db, type, resourceId);
    return row ? this.toWire(row) : undefined;
  }

  /**
   * Resolution order of §12.6: (1) a share header naming a live share of exactly this resource → served as
   * the owner; (2) an authenticated caller who owns it; (3) 404 — shared operations never answer 401.
   * `ownerOf` returns the owner's user id of the addressed resource, or undefined when it does not exist.
   */
  async resolve(
    request: Request,
    principal: Principal | undefined,
    type: ShareableType,
    resourceId: string,
    ownerOf: (resourceId: string) => Promise<string | undefined>,
    what = "Resource",
  ): Promise<SharedAccess> {
    if (!isUuid(resourceId)) throw notFound(what);
    const shareId = shareIdFrom(request);
    if (shareId !== undefined && isUuid(shareId)) {
      const share = await shareStore.byId(this.db, shareId.toLowerCase());
      if (share && share.resource_type === type && share.resource_id === resourceId.toLowerCase())
        return { ownerId: share.user_id, viaShare: share.user_id !== principal?.user?.id };
    }
    const userId = principal?.user?.id;
    if (userId !== undefined && (await ownerOf(resourceId.toLowerCase())) === userId) return { ownerId: userId, viaShare: false };
    throw notFound(what);
  }
}
