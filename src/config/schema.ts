// The whole configuration surface (supplement §23.1). One TypeBox schema is the source of truth for the
// TOML file, the SECBOX_* environment overrides and the `serve` flags.
import { Type as T, type Static, type TObject, type TSchema } from "@sinclair/typebox";

export const TIERS = ["basic", "standard", "professional", "ultimate"] as const;
export type Tier = (typeof TIERS)[number];

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => T.Integer({ minimum: min, maximum: max });

/** Per-tier limits (supplement §22). Every key may be overridden per tier. */
export const TierLimitsSchema = T.Object(
  {
    min_schedule_interval_sec: int(1),
    max_requests_to_track: int(0),
    max_revisions: int(1),
    script_memory_mib: int(1, 4096),
    script_timeout_sec: int(1, 3600),
    max_concurrent_hits: int(1),
    max_tracked_body_bytes: int(0),
    notification_throttles: T.Array(int(1)),
    proxy_timeout_ms: int(1),
    max_responders: int(0),
    max_api_trackers: int(0),
    max_page_trackers: int(0),
    max_scripts: int(0),
    max_secrets: int(0),
    max_tags: int(0),
    kv_max_entries: int(0),
    kv_max_bytes: int(0),
    kv_max_ttl_sec: int(1),
    kv_ops_per_run: int(0),
    /** Stored bytes one user may write through Secbox.kv per second, 0 = unlimited (issue 29). */
    kv_write_bytes_per_second: int(0),
    /** Stored bytes per user over KV, responder history, tracker revisions and interactions (§28). */
    max_storage_bytes: int(0),
    /** Hits per second on one handle (all its responders), 0 = unlimited; beyond: 429 (supplement §28). */
    max_hits_per_second: int(0),
  },
  { additionalProperties: false },
);
export type TierLimits = Static<typeof TierLimitsSchema>;
const TierOverrideSchema = T.Partial(TierLimitsSchema, { additionalProperties: false, default: {} });

const COMMON_TIER_DEFAULTS = {
  max_concurrent_hits: 10,
  max_tracked_body_bytes: 1_048_576,
  notification_throttles: [300, 900, 3600, 21600, 86400],
  proxy_timeout_ms: 30_000,
  max_responders: 100,
  max_api_trackers: 100,
  max_page_trackers: 100,
  max_scripts: 100,
  max_secrets: 100,
  max_tags: 100,
  kv_max_entries: 100_000,
  kv_max_bytes: 1_073_741_824,
  kv_max_ttl_sec: 2_592_000,
  kv_ops_per_run: 200,
};

export const TIER_DEFAULTS: Record<Tier, TierLimits> = {
  basic: {
    ...COMMON_TIER_DEFAULTS,
    min_schedule_interval_sec: 3600,
    max_requests_to_track: 30,
    max_revisions: 30,
    script_memory_mib: 10,
    script_timeout_sec: 10,
    max_storage_bytes: 1_073_741_824,
    max_hits_per_second: 200,
    kv_write_bytes_per_second: 4_194_304,
  },
  standard: {
    ...COMMON_TIER_DEFAULTS,
    min_schedule_interval_sec: 600,
    max_requests_to_track: 30,
    max_revisions: 30,
    script_memory_mib: 10,
    script_timeout_sec: 20,
    max_storage_bytes: 1_073_741_824,
    max_hits_per_second: 200,
    kv_write_bytes_per_second: 4_194_304,
  },
  professional: {
    ...COMMON_TIER_DEFAULTS,
    min_schedule_interval_sec: 60,
    max_requests_to_track: 100,
    max_revisions: 100,
    script_memory_mib: 20,
    script_timeout_sec: 30,
    max_storage_bytes: 5_368_709_120,
    max_hits_per_second: 1000,
    kv_write_bytes_per_second: 16_777_216,
  },
  ultimate: {
    ...COMMON_TIER_DEFAULTS,
    min_schedule_interval_sec: 10,
    max_requests_to_track: 1000,
    max_revisions: 1000,
    script_memory_mib: 50,
    script_timeout_sec: 30,
    max_storage_bytes: 10_737_418_240,
    max_hits_per_second: 0,
    kv_write_bytes_per_second: 0,
  },
};

const section = <P extends Record<string, TSchema>>(props: P) => T.Object(props, { additionalProperties: false });

export const ConfigSchema = T.Object(
  {
    server: section({
      host: T.String({ minLength: 1, default: "127.0.0.1" }),
      port: T.Integer({ minimum: 1, maximum: 65535, default: 7070 }),
      /** "" = http://localhost:<effective port> (§27): the loader derives it after flags and environment. */
      public_url: T.String({ default: "" }),
      data_dir: T.String({ minLength: 1, default: "./data" }),
      max_body_bytes: T.Integer({ minimum: 1024, default: 2_097_152 }),
      max_import_bytes: T.Integer({ minimum: 1024, default: 10_485_760 }),
      trust_proxy: T.Boolean({ default: false }),
      max_in_flight_per_client: T.Integer({ minimum: 0, default: 64 }),
      log_level: T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error")], { default: "info" }),
      /** Free space of data_dir (SQLite) below which writes that add data answer 507 (§28); 0 = no guard. */
      min_free_disk_mib: T.Integer({ minimum: 0, default: 512 }),
      // Threads of the work pool (src/platform/work): imports, KDFs, PKCS, large CSP evaluations; 0 = number of CPUs.
      work_threads: T.Integer({ minimum: 0, maximum: 256, default: 0 }),
    }),
    database: section({
      url: T.String({ default: "" }),
      pool_size: T.Integer({ minimum: 2, maximum: 1000, default: 10 }),
    }),
    responders: section({
      domain: T.String({ minLength: 1, default: "localhost" }),
      url_style: T.Union([T.Literal("subdomain"), T.Literal("path")], { default: "subdomain" }),
      capture: T.Union([T.Literal("batched"), T.Literal("strict")], { default: "batched" }),
    }),
    security: section({
      operators: T.Array(T.String({ minLength: 1 }), { default: [] }),
      jwt_secret: T.String({ default: "" }),
      session_cookie: T.String({ pattern: "^[A-Za-z0-9_-]{1,64}$", default: "secbox_session" }),
      session_ttl: T.Integer({ minimum: 60, default: 1_209_600 }),
      signup: T.Union([T.Literal("open"), T.Literal("closed")], { default: "open" }),
      master_key: T.String({ default: "" }),
    }),
    smtp: section({
      host: T.String({ default: "" }),
      port: T.Integer({ minimum: 1, maximum: 65535, default: 587 }),
      secure: T.Boolean({ default: false }),
      username: T.String({ default: "" }),
      password: T.String({ default: "" }),
      from: T.String({ minLength: 1, default: "Secbox <secbox@localhost>" }),
      catch_all: T.String({ default: "" }),
      unsubscribe_mailto: T.String({ default: "" }),
    }),
    certificates: section({
      openssl: T.String({ default: "openssl" }),
    }),
    chromium: section({
      executable: T.String({ default: "/usr/bin/chromium" }),
      max_concurrency: T.Integer({ minimum: 1, maximum: 64, default: 2 }),
      user: T.String({ default: "nobody" }),
    }),
    network: section({
      allow_private_targets: T.Boolean({ default: false }),
    }),
    scheduler: section({
      enabled: T.Boolean({ default: true }),
      max_concurrent_api: T.Integer({ minimum: 1, maximum: 1000, default: 8 }),
      failure_alert_after: T.Integer({ minimum: 1, maximum: 1000, default: 3 }),
    }),
    scripts: section({
      workers: T.Integer({ minimum: 0, maximum: 256, default: 0 }),
      queue_limit: T.Integer({ minimum: 1, default: 1000 }),
      queue_limit_per_user: T.Integer({ minimum: 1, default: 250 }),
    }),
    subscriptions: section({
      default_tier: T.Union(
        TIERS.map((x) => T.Literal(x)),
        { default: "ultimate" },
      ),
      tiers: section(Object.fromEntries(TIERS.map((tier) => [tier, TierOverrideSchema])) as Record<Tier, typeof TierOverrideSchema>),
    }),
  },
  { additionalProperties: false },
);

type RawConfig = Static<typeof ConfigSchema>;
/** The validated configuration with defaults applied and every tier fully populated. */
export type Config = Omit<RawConfig, "subscriptions"> & {
  subscriptions: { default_tier: Tier; tiers: Record<Tier, TierLimits> };
};

/** Kind of a leaf schema, used to coerce environment strings and flags. */
export function leafKind(schema: TSchema): "integer" | "boolean" | "string" | "array" | "object" {
  if (schema.anyOf) return "string"; // unions of string literals
  const type = schema.type as string;
  if (type === "integer" || type === "number") return "integer";
  if (type === "boolean" || type === "array" || type === "object") return type;
  return "string";
}

export type { TObject };
