// Entry of the work pool's threads (src/platform/work/pool.ts): the composition root of the worker side, as app.ts
// is of the main thread. It lists the feature task modules by the first segment of their task names; each is loaded
// on its thread's first task of that module. In a compiled binary this file is an extra entrypoint (build.ts) found
// at /$bunfs/root/work-tasks.js.
//
// The user-data checks call the owning features' create rules through their services, so a thread that analyses an
// import builds the services as app.ts does (once, on its first such task), on a runtime of its own: the same
// configuration, its read-only SQLite connection as the database (on PostgreSQL a database that refuses every call:
// the main thread reads there), a throwaway key in place of the master key (the checks never seal or open data).
import { randomBytes } from "node:crypto";
import type { Db } from "./platform/db/db";
import { serveTasks } from "./platform/work/worker";
import type { TaskContext, WorkEnv } from "./platform/work/task";

/** A database for threads without one (PostgreSQL): any use is a bug. */
function noDatabase(): Db {
  const refuse = () => {
    throw new Error("work threads have no database connection on PostgreSQL");
  };
  return new Proxy({ dialect: "postgres", topology: "multi-instance", instanceId: "work-thread" } as Db, {
    get: (target, key) => (key in target ? target[key as keyof Db] : key === "subscribe" ? () => () => {} : refuse),
  });
}

async function userDataModule(env: WorkEnv) {
  const { userDataTasks } = await import("./features/user-data/tasks");
  const sqlite = env.config.database.url === "";
  type Built = { deps: ReturnType<typeof import("./app").createServices>["userData"]["deps"]; db: Db | undefined };
  let built: Promise<Built> | undefined;
  // the services (and the whole app's modules) only for the tasks that check or read: not for argon2id alone
  const build = async (ctx: TaskContext): Promise<Built> => {
    const [{ createServices }, { SecretBox }, { createLogger }, { systemClock, VERSION }] = await Promise.all([
      import("./app"),
      import("./platform/crypto/secret-box"),
      import("./platform/log"),
      import("./platform/runtime"),
    ]);
    const db = sqlite ? ctx.db() : noDatabase();
    const services = createServices({
      config: env.config,
      db,
      clock: systemClock,
      secretBox: new SecretBox(new Uint8Array(randomBytes(32))),
      log: createLogger(env.config.server.log_level),
      version: VERSION,
    });
    return { deps: services.userData.deps, db: sqlite ? db : undefined };
  };
  return userDataTasks((ctx) => (built ??= build(ctx)));
}

if (!Bun.isMainThread)
  serveTasks({
    db: async () => (await import("./platform/work/db-tasks")).dbTasks,
    kv: async () => (await import("./sandbox/kv-tasks")).kvTasks,
    csp: async () => (await import("./features/csp/tasks")).cspTasks,
    certificates: async () => (await import("./features/certificates/tasks")).certificateTasks(),
    responders: async () => [
      ...(await import("./features/responders/har")).harTasks,
      ...(await import("./features/responders/har-pages")).harPageTasks,
    ],
    search: async () => (await import("./features/search/tasks")).searchTasks,
    "user-data": (env) => userDataModule(env as WorkEnv),
  });
