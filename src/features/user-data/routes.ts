// /api/user/data/_export, _import_preview, _import (supplement §19.1–§19.4) and the operator's /api/users/_clone
// (§19.5). Bodies up to server.max_import_bytes (the http plugin's limit for /api/user/data/*). The bodies of
// `_import_preview` and `_import` stay raw bytes (RawImport, set before the auth macro would decode them): a work
// thread decodes and checks them (plan.ts), so a 10 MiB file is never copied, decoded or parsed on the event loop.
// The schemas are contract.ts's; the other bodies are read loosely (looseBody) and checked by the service.
import { pullStream } from "../../platform/http/stream";
import { Elysia } from "elysia";
import { looseBody, media, op } from "../../platform/http/contract";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { PendingBody, RawBody } from "../../platform/http/body";
import type { ErrorCode } from "../../platform/core/errors";
import { RawImport, type UserDataService } from "./service";
import { cloneUser } from "./clone";
import {
  CloneParams,
  CloneResponse,
  ExportFile,
  UserDataExportParams,
  UserDataImportParams,
  UserDataImportPreview,
  UserDataImportPreviewParams,
  UserDataImportResult,
} from "./contract";

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
