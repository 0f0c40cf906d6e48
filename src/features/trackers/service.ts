// Trackers (stub; being implemented): scheduler glue, revisions, logs, diffs, notifications; API trackers in api/.
import type { Runtime } from "../../platform/runtime";
import type { NotificationEmailService } from "../notification-email/service";
import type { SecretsService } from "../secrets/service";
import type { TagsService } from "../tags/service";
import type { UsersService } from "../users/service";

export interface TrackersDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
}

export class TrackersService {
  constructor(
    private readonly rt: Runtime,
    private readonly deps: TrackersDeps,
  ) {}

  /** Starts the scheduler (when scheduler.enabled). */
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
}
