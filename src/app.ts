// Builds the application: services from the runtime, then the Elysia app (platform plugins + every
// feature's routes), then the HTTP server. Route plugins receive only the services they use (each feature's
// `*RoutesDeps`); no feature imports this file, so this is the one place that knows every service.
import { Elysia } from "elysia";
import { authPlugin } from "./platform/auth/plugin";
import { cookieGuard, raiseHeaderLimit, SERVER_HEADER_LIMIT_BYTES } from "./platform/auth/cookie-guard";
import { sessionCookieName } from "./platform/auth/cookies";
import { docsPlugin } from "./platform/http/docs";
import { httpPlugin } from "./platform/http/plugin";
import { SourceCaps } from "./platform/http/source-caps";
import { InstanceRegistry } from "./platform/db/instances";
import { Outbox } from "./platform/mail/outbox";
import { uiPlugin } from "./platform/ui/serve";
import { smtpTransport } from "./platform/mail/transport";
import { HTTP_IDLE_TIMEOUT_SEC, tierLimits, type Runtime } from "./platform/runtime";
import { storageGuardPlugin } from "./platform/storage/http";
import { StorageQuota } from "./platform/storage/quota";
import { ScriptPool } from "./sandbox/pool";
import { scriptChecker } from "./sandbox/syntax";
import { extractorForms } from "./features/trackers/page/extractor";
import { availableParallelism } from "node:os";
import { SqliteDb } from "./platform/db/sqlite";
import { WorkPool, workerEntry } from "./platform/work/pool";
import { dbTask } from "./platform/work/db-tasks";
import type { WorkEnv } from "./platform/work/task";
import { messagesRoutes } from "./features/messages/routes";
import { MessagesService } from "./features/messages/service";
import { notificationEmailRoutes } from "./features/notification-email/routes";
import { NotificationEmailService } from "./features/notification-email/service";
import { Shares } from "./platform/auth/share";
import { certificatesRoutes } from "./features/certificates/routes";
import { CertificatesService } from "./features/certificates/service";
import { cspRoutes } from "./features/csp/routes";
import { CspService } from "./features/csp/service";
import { respondersRoutes } from "./features/responders/routes";
import { RespondersService } from "./features/responders/service";
import { trackersRoutes } from "./features/trackers/routes";
import { TrackersService } from "./features/trackers/service";
import { apiKeysRoutes } from "./features/api-keys/routes";
import { ApiKeysService } from "./features/api-keys/service";
import { scriptsRoutes } from "./features/scripts/routes";
import { ScriptsService } from "./features/scripts/service";
import { secretsRoutes } from "./features/secrets/routes";
import { SecretsService } from "./features/secrets/service";
import { settingsRoutes } from "./features/settings/routes";
import { SettingsService } from "./features/settings/service";
import { statusRoutes } from "./features/status/routes";
import { StatusService } from "./features/status/service";
import { tagsRoutes } from "./features/tags/routes";
import { TagsService } from "./features/tags/service";
import { usersRoutes } from "./features/users/routes";
import { UsersService } from "./features/users/service";
import { searchRoutes } from "./features/search/routes";
import { SearchService } from "./features/search/service";
import { IMPORT_PATHS, userDataRoutes } from "./features/user-data/routes";
import { UserDataService } from "./features/user-data/service";

export function createServices(rt: Runtime) {
  // Several instances on one PostgreSQL database: this one's registration and heartbeat (claims name it).
  const instances = new InstanceRegistry(rt.db, (err) => rt.log.error("instance heartbeat failed", { error: String(err) }));
  const outbox = new Outbox(rt, rt.config.smtp.host !== "" ? smtpTransport(rt.config.smtp) : null);
  const users = new UsersService(rt, outbox);
  const apiKeys = new ApiKeysService(rt, users);
  const status = new StatusService(rt);
  const tags = new TagsService(rt);
  const secrets = new SecretsService(rt, tags);
  const settings = new SettingsService(rt);
  const notificationEmail = new NotificationEmailService(rt, users, settings, outbox);
  const messages = new MessagesService(rt, outbox);
  const shares = new Shares(rt.db, rt.clock);
  // Per-user storage cap (tier max_storage_bytes) and the free-disk guard of the SQLite data directory (§28).
  const storage = new StorageQuota({
    db: rt.db,
    log: rt.log,
    limitOf: async (userId, db) => {
      const row = await users.getRow(userId, db);
      if (!row) return undefined;
      const tier = users.effectiveTier(row);
      return { tier, maxBytes: tierLimits(rt.config, tier).max_storage_bytes };
    },
    diskDir: rt.db.dialect === "sqlite" ? rt.config.server.data_dir : null,
    minFreeDiskMib: rt.config.server.min_free_disk_mib,
  });
  // The work pool for CPU-heavy requests (imports, KDFs, PKCS, large CSP evaluations); threads start on demand.
  const work = new WorkPool({
    threads: rt.config.server.work_threads || availableParallelism(),
    entry: workerEntry("work-tasks.js", new URL("./work-tasks.ts", import.meta.url)),
    ...(rt.db instanceof SqliteDb ? { sqlitePath: rt.db.raw.filename } : {}),
    env: { config: rt.config } satisfies WorkEnv,
    log: rt.log,
  });
  // The QuickJS worker pool; workers start on the first script.
  const sandbox = new ScriptPool({
    workers: rt.config.scripts.workers,
    queueLimit: rt.config.scripts.queue_limit,
    queueLimitPerOwner: rt.config.scripts.queue_limit_per_user,
    db: rt.db,
    allowPrivate: rt.config.network.allow_private_targets,
    log: rt.log,
    clock: rt.clock,
  });
  // Syntax warnings on save (§27): compiled in the pool's workers; page extractors parsed in the page's forms.
  const checkScripts = scriptChecker(sandbox, extractorForms);
  const scripts = new ScriptsService(rt, tags, checkScripts);
  const certificates = new CertificatesService(rt, tags, shares, work);
  const csp = new CspService(rt, tags, shares, work);
  const responders = new RespondersService(rt, {
    tags,
    secrets,
    users,
    notificationEmail,
    scripts: sandbox,
    checkScripts,
    deleteKv: async (tx, ownerId, userId) => sandbox.kv?.deleteOwner(ownerId, tx, userId),
    storage,
  });
  // Secbox.kv data counts against the responder's user (KV owners are responders).
  sandbox.kv?.useStorage({
    quota: storage,
    userOf: (owner) => responders.ownerOf(owner),
    ownersOf: (db, userId) => responders.idsOfUser(db, userId),
  });
  // SQLite: Secbox.kv sets and the WAL checkpoints run on the work threads' own connections, off the event loop.
  if (rt.db instanceof SqliteDb) {
    const db = rt.db;
    sandbox.kv?.useWork({ work, holdWriter: () => db.holdWriter() });
    db.offloadCheckpoints(() => work.run("secbox:checkpoint", dbTask.checkpoint, null));
  }
  const trackers = new TrackersService(rt, { tags, secrets, users, notificationEmail, scripts: sandbox, storage, checkScripts });
  const userData = new UserDataService(rt, { tags, secrets, scripts, settings, responders, certificates, csp, trackers, users, storage }, work);
  const search = new SearchService(rt, work);
  const auth = authPlugin({
    config: rt.config,
    clock: rt.clock,
    lookup: {
      byApiKeyHash: (h) => apiKeys.byApiKeyHash(h),
      bySessionHash: (h) => users.bySessionHash(h),
      byEmail: (e) => users.byEmail(e),
    },
  });
  return {
    rt,
    instances,
    auth,
    outbox,
    users,
    apiKeys,
    status,
    tags,
    secrets,
    scripts,
    settings,
    notificationEmail,
    messages,
    shares,
    storage,
    work,
    certificates,
    csp,
    responders,
    trackers,
    sandbox,
    userData,
    search,
  };
}

export type Services = ReturnType<typeof createServices>;

export function createApp(services: Services) {
  const { rt, auth } = services;
  const trustProxy = rt.config.server.trust_proxy;
  // Each feature's routes get exactly the services they use: this is the one place that knows them all.
  return (
    new Elysia({ name: "secbox" })
      // The web UI: GET/HEAD of paths outside /api and /api-docs (platform/ui/serve.ts).
      .use(uiPlugin(rt.log, rt.config.server.public_url))
      .use(
        httpPlugin(
          {
            maxBodyBytes: rt.config.server.max_body_bytes,
            maxImportBytes: rt.config.server.max_import_bytes,
            deferred: (path) => IMPORT_PATHS.has(path),
          },
          rt.log,
        ),
      )
      // 507 for writes that add data while the disk is low (§28).
      .use(storageGuardPlugin(services.storage))
      .use(docsPlugin({ publicUrl: rt.config.server.public_url, sessionCookie: sessionCookieName(rt.config) }))
      .use(statusRoutes({ auth, status: services.status }))
      .use(usersRoutes({ auth, users: services.users, trustProxy }))
      .use(apiKeysRoutes({ auth, apiKeys: services.apiKeys }))
      .use(tagsRoutes({ auth, tags: services.tags }))
      .use(secretsRoutes({ auth, secrets: services.secrets }))
      .use(scriptsRoutes({ auth, scripts: services.scripts }))
      .use(settingsRoutes({ auth, settings: services.settings }))
      .use(notificationEmailRoutes({ auth, notificationEmail: services.notificationEmail }))
      .use(messagesRoutes({ auth, messages: services.messages, trustProxy }))
      .use(certificatesRoutes({ auth, certificates: services.certificates }))
      .use(cspRoutes({ auth, csp: services.csp }))
      .use(respondersRoutes({ auth, responders: services.responders, work: services.work }))
      .use(trackersRoutes({ auth, trackers: services.trackers }))
      .use(userDataRoutes({ auth, userData: services.userData }))
      .use(searchRoutes({ auth, search: services.search }))
  );
}

export type App = ReturnType<typeof createApp>;

/** Background work of a serving process: the mail sender (later also the scheduler and hit notifications). */
const HOUR_MS = 3_600_000;
/** How long shutdown waits for responder hits in progress before ending their scripts. */
const SHUTDOWN_GRACE_MS = 5000;
/** A request over its source's in-flight cap waits this long for its 503 (see source-caps.ts). */
const REFUSED_HOLD_MS = 1000;
const housekeeping = new WeakMap<Services, ReturnType<typeof setInterval>>();

export async function startBackground(services: Services) {
  await services.instances.start();
  await services.storage.start();
  await services.outbox.start();
  await services.responders.start();
  await services.trackers.start();
  const purge = () =>
    services.users.purgeExpiredSessions().catch((err) => services.rt.log.error("purging expired sessions failed", { error: String(err) }));
  await purge();
  housekeeping.set(services, setInterval(purge, HOUR_MS));
}

export async function stopBackground(services: Services) {
  clearInterval(housekeeping.get(services));
  await services.trackers.stop();
  // Hits in progress finish (scripts included) and are captured; a script still running after the grace period
  // ends with the pool, and its hit is captured as failed.
  const left = await services.responders.drain(SHUTDOWN_GRACE_MS);
  if (left > 0) services.rt.log.warn("responders: scripts still running at shutdown are ended", { hits: left });
  await services.sandbox.close();
  await services.work.close();
  await services.responders.stop();
  await services.outbox.stop();
  services.storage.stop();
  await services.instances.stop();
}

export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Serves the app. Responder hosts (and the /api/webhooks/<handle> path form) are dispatched before Elysia sees
 * the request, so hits skip API routing entirely. No SO_REUSEPORT: a second server on a busy port fails
 * instead of silently sharing it. Idle connections close after HTTP_IDLE_TIMEOUT_SEC (10 s); Bun applies that
 * timeout also while a request is being handled, so long work lifts it for its own request (scripted responder
 * hits: responders/engine.ts). API routes with long work (tracker `_test`, `_debug`, refresh, CSP import,
 * `_fetch`) all read a JSON body first, and Bun does not time a request out once its body has been read
 * (measured with Bun 1.4.5). In front of everything, the per-source cap (`server.max_in_flight_per_client`,
 * platform/http/source-caps.ts): the earliest point where Bun lets us refuse a flooding client's request. Requests
 * to the API host pass the cookie guard (platform/auth/cookie-guard.ts); Bun's header limit is raised first so that
 * an oversized Cookie header reaches it instead of Bun's bare 431.
 */
export function listen(app: App, services: Services, host: string, port: number): RunningServer {
  const limit = raiseHeaderLimit();
  if (limit < SERVER_HEADER_LIMIT_BYTES)
    services.rt.log.warn(
      `request headers are limited to ${limit} bytes: a browser with oversized cookies gets 431 (start with BUN_OPTIONS=--max-http-header-size=${SERVER_HEADER_LIMIT_BYTES})`,
    );
  const { server: cfg } = services.rt.config;
  const caps = new SourceCaps({ maxInFlight: cfg.max_in_flight_per_client, trustProxy: cfg.trust_proxy, holdMs: REFUSED_HOLD_MS });
  const api = cookieGuard(services.rt.config, (request) => app.fetch(request));
  const server = Bun.serve({
    hostname: host,
    port,
    reusePort: false,
    idleTimeout: HTTP_IDLE_TIMEOUT_SEC,
    fetch: caps.wrap((request, srv) => services.responders.dispatch(request, srv) ?? api(request)),
  });
  // Elysia's handlers read the Bun server from the app (client IPs through `server.requestIP`).
  (app as { server: typeof server | null }).server = server;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    stop: async () => {
      await server.stop(true);
    },
  };
}
