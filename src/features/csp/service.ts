// Content security policies (stub; being implemented).
import type { Shares } from "../../platform/auth/share";
import type { Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";

export class CspService {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
    private readonly shares: Shares,
  ) {}
}
