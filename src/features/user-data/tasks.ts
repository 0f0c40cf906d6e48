// User data work on the work pool (issue 29, platform/work): the analysis of a preview or import request (plan.ts,
// with the features' create rules and, on SQLite, the thread's own read-only connection), argon2id for an
// export's secret values, and the serialization of an export's history records and revisions. The worker entry (src/work-tasks.ts) builds the services the checks need and lists
// `userDataTasks(...)`.
import type { Db } from "../../platform/db/db";
import { implement, taskRef, transfer, type TaskContext, type TaskImpl } from "../../platform/work/task";
import { deriveKeySync, type KdfParams } from "./crypto";
import { createHandlers, type TypeHandler, type UserDataDeps } from "./entities";
import type { EntityType } from "./file";
import { recordsTask, renderRecord } from "./exporter";
import { analyzeRequest, type AnalyzeInput, type AnalyzeOutput } from "./plan";

export const userDataTask = {
  analyze: taskRef<AnalyzeInput, AnalyzeOutput>("user-data.analyze"),
  deriveKey: taskRef<{ passphrase: string; salt: Uint8Array; params: KdfParams }, Uint8Array>("user-data.deriveKey"),
};

function renderRecords({ kind, items }: { kind: "history" | "revisions"; items: unknown[] }) {
  const bytes = new TextEncoder().encode(items.map((r) => JSON.stringify(renderRecord(kind, r))).join(","));
  const buf = bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
  return transfer(buf, [buf]);
}

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
    implement(recordsTask, renderRecords),
  ];
}
