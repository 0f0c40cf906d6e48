// /api/user/data/_export, _import_preview, _import (supplement §19.1–§19.4) and the operator's /api/users/_clone
// (§19.5). Bodies up to server.max_import_bytes (the http plugin's limit for /api/user/data/*).
import { Elysia, t } from "elysia";
import type { TOptional, TSchema } from "@sinclair/typebox";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { UserDataService } from "./service";
import { UserSchema } from "../users/routes";
import { cloneUser } from "./clone";

const detail = (summary: string, tag = "user-data") => ({ tags: [tag], summary });
const Id = t.String({ format: "uuid" });

const TypeNames = ["tags", "scripts", "secrets", "responders", "certificateTemplates", "privateKeys", "contentSecurityPolicies", "pageTrackers", "apiTrackers"] as const;
/** One optional member per entity type of the file. */
const perType = (schema: TSchema) => Object.fromEntries(TypeNames.map((n) => [n, t.Optional(schema)])) as Record<string, TOptional<TSchema>>;

// Loose types: the service checks every member and answers the spec's messages and codes.
const ExportBody = t.Object({
  include: t.Optional(
    t.Unknown({
      description:
        "type → {type: all | selected, ids?} (responders, pageTrackers, apiTrackers also includeHistory), settings: bool; absent = everything without history, settings included",
    }),
  ),
  secretsPassphrase: t.Optional(t.Unknown({ description: "≥ 8 characters; adds secret values (argon2id + AES-256-GCM, §19.2)" })),
});

const PreviewBody = t.Object({
  data: t.Optional(t.Unknown({ description: "the export file (§19.2), as a JSON object or its text" })),
  mode: t.Optional(t.Unknown({ description: "merge (default) | apply" })),
});

const ImportBody = t.Object({
  data: t.Optional(t.Unknown({ description: "the export file (§19.2), as a JSON object or its text" })),
  mode: t.Optional(t.Unknown({ description: "merge (default) | apply" })),
  selections: t.Optional(t.Unknown({ description: "type → [{sourceId, action: import | skip, conflictResolution?: rename | overwrite | skip}]" })),
  importSettings: t.Optional(t.Unknown({ description: "default true" })),
  secretsPassphrase: t.Optional(t.Unknown({ description: "needed when imported secrets carry values" })),
  applyDeletions: t.Optional(t.Unknown({ description: "apply mode: type → [ids of the preview's toDelete]" })),
});

const Conflict = t.Object({ sourceId: Id, name: t.String(), existingId: Id, renameAllowed: t.Boolean() });
const TypeSummary = t.Object({ total: t.Integer(), conflicts: t.Array(Conflict) });
const PreviewSchema = t.Object({
  valid: t.Boolean(),
  version: t.Optional(t.Integer()),
  summary: t.Object({ ...perType(TypeSummary), settings: t.Optional(t.Object({ included: t.Boolean(), hasExisting: t.Boolean() })) }),
  warnings: t.Array(t.String()),
  toDelete: t.Optional(t.Object(perType(t.Array(t.Object({ id: Id, name: t.String() }))), { description: "apply mode only" })),
});

const TypeResult = t.Object({ imported: t.Integer(), updated: t.Integer(), skipped: t.Integer(), deleted: t.Integer() });
const ImportResultSchema = t.Object({
  results: t.Object({ ...perType(TypeResult), settings: t.Object({ imported: t.Boolean() }) }),
  warnings: t.Array(t.String()),
});

const CloneBody = t.Object({
  source: t.Optional(t.Unknown({ description: "{email} or {id}" })),
  destination: t.Optional(t.Unknown({ description: "{email, handle?}" })),
  includeHistory: t.Optional(t.Unknown({ description: "default true" })),
  copySubscription: t.Optional(t.Unknown({ description: "default true" })),
  recoveryLinkExpiresIn: t.Optional(t.Unknown({ description: "seconds, 60..604800, default 3600" })),
});

const CloneResponseSchema = t.Object({
  id: Id,
  user: UserSchema,
  recoveryLink: t.Object({ url: t.String(), expiresAt: t.Integer() }),
  summary: ImportResultSchema,
});

/** Pulls the next chunk only when the client reads (backpressure), so a large export is never buffered whole. */
function streamOf(chunks: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface UserDataRoutesDeps {
  auth: AuthPlugin;
  userData: UserDataService;
}

export const userDataRoutes = ({ auth, userData }: UserDataRoutesDeps) =>
  new Elysia({ name: "feature/user-data" })
    .use(auth)
    .post(
      "/api/user/data/_export",
      async ({ user, body }) => {
        const { fileName, chunks } = await userData.export(user.id, body);
        return new Response(streamOf(chunks), {
          headers: { "content-type": "application/json; charset=utf-8", "content-disposition": `attachment; filename="${fileName}"` },
        });
      },
      {
        auth: "user",
        body: ExportBody,
        detail: {
          ...detail("Export the caller's data as a downloadable file (§19.2), streamed"),
          responses: { 200: { description: "the export file (§19.2) as an attachment secbox-export-<YYYYMMDD-HHMMSS>.json" } },
        },
      },
    )
    .post("/api/user/data/_import_preview", ({ user, body }) => userData.preview(user, body), {
      auth: "user",
      body: PreviewBody,
      response: { 200: PreviewSchema },
      detail: detail("What an import of the file would do; an invalid file is 200 {valid: false, warnings}"),
    })
    .post("/api/user/data/_import", ({ user, body }) => userData.import(user, body), {
      auth: "user",
      body: ImportBody,
      response: { 200: ImportResultSchema },
      detail: detail("Import a file: all or nothing (400 naming the type and sourceId, nothing changed)"),
    })
    .post("/api/users/_clone", ({ body }) => cloneUser(userData, body), {
      auth: "operator",
      body: CloneBody,
      response: { 200: CloneResponseSchema },
      detail: detail("Copy a user's data into a new user and return a recovery link (operator)", "users"),
    });
