// User data work on the work pool (issue 29, platform/work): the analysis of a preview or import request (plan.ts,
// with the features' create rules and, on SQLite, the thread's own read-only connection) and argon2id for an
// export's secret values. The worker entry (src/work-tasks.ts) builds the services the checks need and lists
// `userDataTasks(...)`.
import type { Db } from "../../platform/db/db";
import { implement, taskRef, transfer, type TaskContext, type TaskImpl } from "../../platform/work/task";
import { deriveKeySync, type KdfParams } from "./crypto";
import { createHandlers, type TypeHandler, type UserDataDeps } from "./entities";
import type { EntityType } from "./file";
import { analyzeRequest, type AnalyzeInput, type AnalyzeOutput } from "./plan";

export const userDataTask = {
  analyze: taskRef<AnalyzeInput, AnalyzeOutput>("user-data.analyze"),
  deriveKey: taskRef<{ passphrase: string; salt: Uint8Array; params: KdfParams }, Uint8Array>("user-data.deriveKey"),
};

/** `servicesFor(ctx)`: the services whose rules the checks call, built once per thread by the composition root, and
 *  the thread's database connection (undefined on PostgreSQL). */
export function userDataTasks(servicesFor: (ctx: TaskContext) => { deps: UserDataDeps; db: Db | undefined }): TaskImpl[] {
  let handlers: Record<EntityType, TypeHandler> | undefined;
  return [
    implement(userDataTask.analyze, async (input, ctx) => {
      const { deps, db } = servicesFor(ctx);
      handlers ??= createHandlers(deps);
      const out = await analyzeRequest(input, { deps, handlers, db });
      return transfer(out.output, out.transfer);
    }),
    implement(userDataTask.deriveKey, ({ passphrase, salt, params }) => deriveKeySync(passphrase, salt, params)),
  ];
}
