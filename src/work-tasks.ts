// Entry of the work pool's threads (src/platform/work/pool.ts): the composition root of the worker side, as app.ts
// is of the main thread. It lists the feature task modules by the first segment of their task names; each is loaded
// on its thread's first task of that module. In a compiled binary this file is an extra entrypoint (build.ts) found
// at /$bunfs/root/work-tasks.js.
import type { Config } from "./config/schema";
import { serveTasks } from "./platform/work/worker";

/** What app.ts hands every work thread (WorkPool `env`). */
export interface WorkEnv {
  config: Config;
}

if (!Bun.isMainThread)
  serveTasks({
    csp: async () => (await import("./features/csp/tasks")).cspTasks,
    certificates: async () => (await import("./features/certificates/tasks")).certificateTasks(),
  });
