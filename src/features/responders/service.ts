// Webhook responders (stub; being implemented).
import type { Server } from "bun";
import type { Runtime } from "../../platform/runtime";
import type { NotificationEmailService } from "../notification-email/service";
import type { SecretsService } from "../secrets/service";
import type { TagsService } from "../tags/service";
import type { UsersService } from "../users/service";

export interface RespondersDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
}

export class RespondersService {
  constructor(
    private readonly rt: Runtime,
    private readonly deps: RespondersDeps,
  ) {}

  /** A responder hit when the request's host (or path form) belongs to the responder engine, else undefined. */
  dispatch(_request: Request, _server: Server<unknown> | null): Promise<Response> | undefined {
    return undefined;
  }

  /** Background work (capture flushing, hit summaries). */
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
}
