// Certificates (stub; being implemented): private keys, templates, generation, remote chain fetch, sharing.
import type { Shares } from "../../platform/auth/share";
import type { Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";

export class CertificatesService {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
    private readonly shares: Shares,
  ) {}
}
