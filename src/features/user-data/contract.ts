// The user data contract (supplement §19.1–§19.5, interface "user-data", "Clone behaviour"): the one declaration of
// each wire shape and request body — export, import preview, import, operator clone — as TypeBox schemas (routes.ts
// documents the routes with them; the web's types are generated from that document) and, beside each, its TypeScript
// type (`Static`). Requests are read loosely (looseBody, or raw text for the import routes: plan.ts) and checked by
// the service with the messages of supplement §2; the values here come from shared-rules.ts.
// Owns: declarations only. Must never: hold a rule's value (shared-rules.ts does) or import a service.
import type { TOptional, TSchema } from "@sinclair/typebox";
import { Dict, Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { User } from "../users/contract";
import { CLONE_LINK_TTL_SEC, CONFLICT_RESOLUTIONS, ENTITY_TYPES, IMPORT_MODES, MIN_PASSPHRASE_CHARS, TYPES_WITH_HISTORY } from "./shared-rules";

export type EntityType = (typeof ENTITY_TYPES)[number];
export type Mode = (typeof IMPORT_MODES)[number];
export type Resolution = (typeof CONFLICT_RESOLUTIONS)[number];

/** A body as it reaches the service (looseBody: every member as sent). */
type Loose<S extends TSchema> = { [K in keyof Static<S>]?: unknown };

const Id = Uuid();
const WithHistory: ReadonlySet<string> = new Set(TYPES_WITH_HISTORY);
/** One optional member per entity type of the file. */
const perType = <S extends TSchema>(schema: (type: EntityType) => S) =>
  Object.fromEntries(ENTITY_TYPES.map((n) => [n, T.Optional(schema(n))])) as unknown as { [K in EntityType]: TOptional<S> };

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
      T.Object(
        { ...perType(Selection), settings: Opt(T.Boolean()) },
        { description: "an absent type is not exported; an absent include exports everything without history, settings included" },
      ),
    ),
    secretsPassphrase: Opt(
      T.String({ minLength: MIN_PASSPHRASE_CHARS, description: "adds secret values, encrypted with it (argon2id + AES-256-GCM)" }),
    ),
  }),
);
export type ExportInput = Loose<typeof UserDataExportParams>;

/** The export file's outline (the `_export` response). */
export const ExportFile = T.Object(
  {
    format: StringEnum(["secbox-export"]),
    version: T.Integer(),
    exportedAt: UnixTime(),
    secretsEncryption: T.Optional(T.Object({}, { additionalProperties: true, description: "present when secret values are included" })),
    data: T.Object({}, { additionalProperties: true, description: "entities by type, in their API shape (supplement §19.2)" }),
  },
  { description: "the export file (supplement §19.2)" },
);
const FileParam = T.Union([T.Object({}, { additionalProperties: true }), T.String()], {
  description: "the export file (§19.2), as a JSON object or its text",
});
const ModeParam = StringEnum(IMPORT_MODES, { description: "default merge" });
export const UserDataImportPreviewParams = Named("UserDataImportPreviewParams", T.Object({ data: FileParam, mode: Opt(ModeParam) }));
const ImportSelection = T.Object({
  sourceId: Uuid(),
  action: StringEnum(["import", "skip"]),
  conflictResolution: Opt(
    StringEnum(CONFLICT_RESOLUTIONS, { description: "default: merge → rename (skip where renaming is not allowed), apply → overwrite" }),
  ),
});
export const UserDataImportParams = Named(
  "UserDataImportParams",
  T.Object({
    data: FileParam,
    mode: Opt(ModeParam),
    selections: Opt(Dict(T.Array(ImportSelection), { description: "type → entries; a type without selections imports all its entities" })),
    importSettings: Opt(T.Boolean({ description: "default true" })),
    secretsPassphrase: Opt(T.String({ description: "needed when imported secrets carry values" })),
    applyDeletions: Opt(Dict(T.Array(Uuid()), { description: "apply mode: type → ids of the preview's toDelete" })),
  }),
);

const Conflict = T.Object({ sourceId: Id, name: T.String(), existingId: Id, renameAllowed: T.Boolean() });
/** An entity of the file whose name is taken by a stored one (§19.3). */
export type ConflictInfo = Static<typeof Conflict>;
const TypeSummary = T.Object({ total: T.Integer({ minimum: 0 }), conflicts: T.Array(Conflict) });
export type TypeSummary = Static<typeof TypeSummary>;
const Deletion = T.Array(T.Object({ id: Id, name: T.String() }));
export const UserDataImportPreview = Named(
  "UserDataImportPreview",
  T.Object({
    valid: T.Boolean({ description: "false: the file failed validation (reasons in warnings)" }),
    version: T.Optional(T.Integer()),
    summary: T.Object({ ...perType(() => TypeSummary), settings: T.Optional(T.Object({ included: T.Boolean(), hasExisting: T.Boolean() })) }),
    warnings: T.Array(T.String()),
    toDelete: T.Optional(
      T.Object(
        perType(() => Deletion),
        { description: "apply mode only" },
      ),
    ),
  }),
);
export type Preview = Static<typeof UserDataImportPreview>;

const TypeResultSchema = T.Object({ imported: T.Integer(), updated: T.Integer(), skipped: T.Integer(), deleted: T.Integer() });
export type TypeResult = Static<typeof TypeResultSchema>;
export const UserDataImportResult = Named(
  "UserDataImportResult",
  T.Object({
    results: T.Object({ ...perType(() => TypeResultSchema), settings: T.Optional(T.Object({ imported: T.Boolean() })) }),
    warnings: T.Array(T.String()),
  }),
);
export type ImportResult = Static<typeof UserDataImportResult>;

export const CloneParams = Named(
  "CloneParams",
  T.Object({
    source: T.Union([T.Object({ email: T.String({ format: "email" }) }), T.Object({ id: Uuid() })], {
      description: "the user to copy (unknown → 404)",
    }),
    destination: T.Object({ email: T.String({ format: "email" }), handle: Opt(T.String({ pattern: "^[a-z0-9]{3,26}$" })) }),
    includeHistory: Opt(T.Boolean({ description: "default true: responder history and tracker revisions" })),
    copySubscription: Opt(T.Boolean({ description: "default true" })),
    recoveryLinkExpiresIn: Opt(
      T.Integer({ minimum: CLONE_LINK_TTL_SEC.min, maximum: CLONE_LINK_TTL_SEC.max, description: "seconds, default 3,600" }),
    ),
  }),
);
export type CloneInput = Loose<typeof CloneParams>;
export const CloneResponse = Named(
  "CloneResponse",
  T.Object({
    id: Id,
    user: User,
    recoveryLink: T.Object({ url: T.String({ format: "uri" }), expiresAt: UnixTime() }),
    summary: UserDataImportResult,
  }),
);
export type CloneResponse = Static<typeof CloneResponse>;
