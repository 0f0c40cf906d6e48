// Settings (stub; being implemented).
import type { Runtime } from "../../platform/runtime";

export class SettingsService {
  constructor(private readonly rt: Runtime) {}
}
