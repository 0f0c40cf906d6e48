// /api/user/data/_export, _import_preview, _import (supplement §19.1–§19.4) and the operator's /api/users/_clone
// (§19.5). Bodies up to server.max_import_bytes (the http plugin's limit for /api/user/data/*). The bodies of
// `_import_preview` and `_import` stay raw bytes (RawImport, set before the auth macro would decode them): a work
// thread decodes and checks them (plan.ts), so a 10 MiB file is never copied, decoded or parsed on the event loop.
import { pullStream } from "../../platform/http/stream";
import { Elysia } from "elysia";
import type { TOptional, TSchema } from "@sinclair/typebox";
import { Dict, looseBody, media, Named, op, Opt, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { PendingBody, RawBody } from "../../platform/http/body";
import type { ErrorCode } from "../../platform/http/errors";
import { RawImport, type UserDataService } from "./service";
import { User } from "../users/routes";
import { cloneUser } from "./clone";

const Id = Uuid();
const TypeNames = ["tags", "scripts", "secrets", "responders", "certificateTemplates", "privateKeys", "contentSecurityPolicies", "pageTrackers", "apiTrackers"] as const;
const WithHistory = new Set<string>(["responders", "pageTrackers", "apiTrackers"]);
/** One optional member per entity type of the file. */
const perType = (schema: (type: string) => TSchema) => Object.fromEntries(TypeNames.map((n) => [n, T.Optional(schema(n))])) as Record<string, TOptional<TSchema>>;

const Selection = (type: string): TSchema =>
  T.Object({
    type: StringEnum(["all", "selected"]),
    ids: Opt(T.Array(Uuid(), { description: "with type selected: the ids to export (unknown → 400)" })),
    ...(WithHistory.has(type) ? { includeHistory: Opt(T.Boolean({ description: "default false" })) } : {}),
  });
export const UserDataExportParams = Named(
  "UserDataExportParams",
  T.Object({
    include: Opt(
      T.Object({ ...perType(Selection), settings: Opt(T.Boolean()) }, { description: "an absent type is not exported; an absent include exports everything without history, settings included" }),
    ),
    secretsPassphrase: Opt(T.String({ minLength: 8, description: "adds secret values, encrypted with it (argon2id + AES-256-GCM)" })),
  }),
);
const ExportFile = T.Object(
  {
    format: StringEnum(["secbox-export"]),
    version: T.Integer(),
    exportedAt: UnixTime(),
    secretsEncryption: T.Optional(T.Object({}, { additionalProperties: true, description: "present when secret values are included" })),
    data: T.Object({}, { additionalProperties: true, description: "entities by type, in their API shape (supplement §19.2)" }),
  },
  { description: "the export file (supplement §19.2)" },
);
const FileParam = T.Union([T.Object({}, { additionalProperties: true }), T.String()], { description: "the export file (§19.2), as a JSON object or its text" });
const Mode = StringEnum(["merge", "apply"], { description: "default merge" });
export const UserDataImportPreviewParams = Named("UserDataImportPreviewParams", T.Object({ data: FileParam, mode: Opt(Mode) }));
const ImportSelection: TSchema = T.Object({
  sourceId: Uuid(),
  action: StringEnum(["import", "skip"]),
  conflictResolution: Opt(StringEnum(["rename", "overwrite", "skip"], { description: "default: merge → rename (skip where renaming is not allowed), apply → overwrite" })),
});
export const UserDataImportParams = Named(
  "UserDataImportParams",
  T.Object({
    data: FileParam,
    mode: Opt(Mode),
    selections: Opt(Dict(T.Array(ImportSelection), { description: "type → entries; a type without selections imports all its entities" })),
    importSettings: Opt(T.Boolean({ description: "default true" })),
    secretsPassphrase: Opt(T.String({ description: "needed when imported secrets carry values" })),
    applyDeletions: Opt(Dict(T.Array(Uuid()), { description: "apply mode: type → ids of the preview's toDelete" })),
  }),
);

const Conflict: TSchema = T.Object({ sourceId: Id, name: T.String(), existingId: Id, renameAllowed: T.Boolean() });
const TypeSummary: TSchema = T.Object({ total: T.Integer({ minimum: 0 }), conflicts: T.Array(Conflict) });
const Deletion: TSchema = T.Array(T.Object({ id: Id, name: T.String() }));
export const UserDataImportPreview = Named(
  "UserDataImportPreview",
  T.Object({
    valid: T.Boolean({ description: "false: the file failed validation (reasons in warnings)" }),
    version: T.Optional(T.Integer()),
    summary: T.Object({ ...perType(() => TypeSummary), settings: T.Optional(T.Object({ included: T.Boolean(), hasExisting: T.Boolean() })) }),
    warnings: T.Array(T.String()),
    toDelete: T.Optional(T.Object(perType(() => Deletion), { description: "apply mode only" })),
  }),
);
const TypeResult: TSchema = T.Object({ imported: T.Integer(), updated: T.Integer(), skipped: T.Integer(), deleted: T.Integer() });
export const UserDataImportResult = Named(
  "UserDataImportResult",
  T.Object({
    results: T.Object({ ...perType(() => TypeResult), settings: T.Optional(T.Object({ imported: T.Boolean() })) }),
    warnings: T.Array(T.String()),
  }),
);
export const CloneParams = Named(
  "CloneParams",
  T.Object({
    source: T.Union([T.Object({ email: T.String({ format: "email" }) }), T.Object({ id: Uuid() })], { description: "the user to copy (unknown → 404)" }),
    destination: T.Object({ email: T.String({ format: "email" }), handle: Opt(T.String({ pattern: "^[a-z0-9]{3,26}$" })) }),
    includeHistory: Opt(T.Boolean({ description: "default true: responder history and tracker revisions" })),
    copySubscription: Opt(T.Boolean({ description: "default true" })),
    recoveryLinkExpiresIn: Opt(T.Integer({ minimum: 60, maximum: 604_800, description: "seconds, default 3,600" })),
  }),
);
export const CloneResponse = Named(
  "CloneResponse",
  T.Object({
    id: Id,
    user: User,
    recoveryLink: T.Object({ url: T.String({ format: "uri" }), expiresAt: UnixTime() }),
    summary: UserDataImportResult,
  }),
);
const tags = ["user-data"];
/** Codes an imported entity's own checks can raise (the import answers the first one). */
const ENTITY_CODES = ["TARGET_NOT_ALLOWED", "INVALID_SCHEDULE", "SCHEDULE_TOO_FREQUENT", "ALGORITHM_UNAVAILABLE"] as const;

/** The routes whose body the http plugin leaves unread (PendingBody) until the service has taken the user's one
 *  import slot: a second upload meanwhile is answered 429 without its 10 MiB passing through the event loop. */
export const IMPORT_PATHS = new Set(["/api/user/data/_import_preview", "/api/user/data/_import"]);

/** Route transform, before the auth macro's (a route's own hooks run first): the body stays raw for the work thread. */
const keepRaw = (ctx: { body: unknown }) => {
  if (ctx.body instanceof PendingBody) ctx.body = new RawImport(ctx.body, ctx.body.contentType);
  else if (ctx.body instanceof RawBody) ctx.body = new RawImport(ctx.body.bytes, ctx.body.contentType);
};
/** Besides the entity codes: a second preview/import while one runs (429), a full work queue or overlong work (503). */
const BUSY: { 429: ErrorCode[]; 503: ErrorCode[] } = { 429: ["RATE_LIMITED"], 503: ["UNAVAILABLE"] };


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
        return new Response(pullStream(chunks), {
          headers: { "content-type": "application/json; charset=utf-8", "content-disposition": `attachment; filename="${fileName}"` },
        });
      },
      {
        auth: "user",
        body: looseBody(UserDataExportParams),
        detail: op({
          tags,
          summary: "Export the caller's data as a downloadable file (§19.2), streamed",
          body: UserDataExportParams,
          responses: {
            200: media("application/json", ExportFile, {
              headers: { "Content-Disposition": { description: 'attachment; filename="secbox-export-<YYYYMMDD-HHMMSS>.json" (UTC)' } },
            }),
          },
          errors: BUSY,
          example: { include: { tags: { type: "all" }, responders: { type: "all", includeHistory: true }, settings: true } },
        }),
      },
    )
    .post("/api/user/data/_import_preview", ({ user, body }) => userData.preview(user, body), {
      auth: "user",
      transform: keepRaw,
      detail: op({
        tags,
        summary: "What an import of the file would do; an invalid file is 200 {valid: false, warnings}",
        description: "One preview or import per user at a time: another one meanwhile is answered 429.",
        body: UserDataImportPreviewParams,
        responses: { 200: UserDataImportPreview },
        errors: { 400: ["INVALID_JSON", "BAD_CONTENT_TYPE"], ...BUSY },
      }),
    })
    .post("/api/user/data/_import", ({ user, body }) => userData.import(user, body), {
      auth: "user",
      transform: keepRaw,
      detail: op({
        tags,
        summary: "Import a file: all or nothing (400 naming the type and sourceId, nothing changed)",
        description: "One preview or import per user at a time: another one meanwhile is answered 429.",
        body: UserDataImportParams,
        responses: { 200: UserDataImportResult },
        // The first problem of an entity names its code (e.g. a tracker aimed at a private address).
        errors: { 400: ["INVALID_JSON", "BAD_CONTENT_TYPE", "BAD_PASSPHRASE", "LIMIT_REACHED", ...ENTITY_CODES], ...BUSY },
      }),
    })
    .post("/api/users/_clone", ({ body }) => cloneUser(userData, body), {
      auth: "operator",
      body: looseBody(CloneParams),
      detail: op({
        tags: ["users"],
        summary: "Copy a user's data into a new user and return a recovery link (operator)",
        body: CloneParams,
        responses: { 200: CloneResponse },
        errors: { 400: ["EMAIL_TAKEN", "HANDLE_TAKEN", ...ENTITY_CODES], 404: ["NOT_FOUND"] },
        example: { source: { email: "ana@example.com" }, destination: { email: "ana+clone@example.com" } },
      }),
    });
