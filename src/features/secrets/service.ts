// Secrets (stub; being implemented).
import type { Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";

export class SecretsService {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
  ) {}
}
