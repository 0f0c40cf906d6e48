// User data work on the work pool (issue 29, platform/work): the analysis of a preview or import request (plan.ts,
// with the features' create rules and, on SQLite, the thread's own read-only connection), argon2id for an
// export's secret values, and the serialization of an export's history records and revisions. The worker entry (src/work-tasks.ts) builds the services the checks need and lists
// `userDataTasks(...)`.
import type { Db } from "../../platform/db/db";
import { implement, taskRef, transfer, type TaskContext, type TaskImpl } from "../../platform/work/task";
import { deriveKeySync, type KdfParams } from "./crypto";
import { createHandlers, type TypeHandler, type UserDataDeps } from "./entities";
import type { EntityType } from "./contract";
import { recordPage, recordPageTask, recordsTask, renderRecord } from "./exporter";
import { analyzeRequest, type AnalyzeInput, type AnalyzeOutput } from "./plan";

export const userDataTask = {
  analyze: taskRef<AnalyzeInput, AnalyzeOutput>("user-data.analyze"),
  deriveKey: taskRef<{ passphrase: string; salt: Uint8Array; params: KdfParams }, Uint8Array>("user-data.deriveKey"),
};

function rendered(kind: "history" | "revisions", items: unknown[]): ArrayBuffer {
  const bytes = new TextEncoder().encode(items.map((r) => JSON.stringify(renderRecord(kind, r))).join(","));
  return bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
}

/** `servicesFor(ctx)`: the services whose rules the checks call (and whose reads the export pages use), built once
 *  per thread by the composition root on first need, and the thread's database connection (undefined on PostgreSQL). */
export function userDataTasks(servicesFor: (ctx: TaskContext) => Promise<{ deps: UserDataDeps; db: Db | undefined }>): TaskImpl[] {
  let handlers: Record<EntityType, TypeHandler> | undefined;
  return [
    implement(userDataTask.analyze, async (input, ctx) => {
      const { deps, db } = await servicesFor(ctx);
      handlers ??= createHandlers(deps);
      const out = await analyzeRequest(input, { deps, handlers, db });
      return transfer(out.output, out.transfer);
    }),
    implement(userDataTask.deriveKey, ({ passphrase, salt, params }) => deriveKeySync(passphrase, salt, params)),
    implement(recordsTask, ({ kind, items }) => {
      const buf = rendered(kind, items);
      return transfer(buf, [buf]);
    }),
    // read on this thread's own connection (SQLite) through the features' services, then written
    implement(recordPageTask, async (p, ctx) => {
      const { items, next } = await recordPage((await servicesFor(ctx)).deps, p);
      const buf = rendered(p.kind, items);
      return transfer({ bytes: buf, count: items.length, next }, [buf]);
    }),
  ];
}
