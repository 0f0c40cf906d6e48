// Scripts (stub; being implemented).
import type { Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";

export class ScriptsService {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
  ) {}
}
