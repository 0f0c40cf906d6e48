// What a responder may be (supplement §11.1, §11.2): the rules of its members — location, method, enabled flag,
// settings (status, headers, body, script, secrets selector, notifications), how settings are written into a row,
// and the name / location clashes checked inside the write's transaction. The wire shapes are contract.ts's; the
// limits and patterns shared-rules.ts's (the web has the same values).
// RespondersService (service.ts) checks create and update bodies with these; ResponderTransfer (transfer.ts) checks
// imports and clones with the same ones.
// Owns: validation and the settings ↔ row mapping. Must never: write to the database (checkConflicts only reads, in
// the caller's transaction), or accept a value it has not checked (every 4xx names its field).
import type { TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { conflict, duplicateName, invalid } from "../../platform/core/errors";
import { utf8Length } from "../../platform/core/validate";
import { tierLimits, type Runtime } from "../../platform/runtime";
import { TOKEN_RE } from "../../platform/net/shared-rules";
import type { SecretsSelector } from "../secrets/contract";
import { selectorToText, type ParsedSelector, type SecretsService } from "../secrets/service";
import type { PathType, ResponderMethod } from "./contract";
import { methodsOverlap } from "./match";
import type { HeaderList } from "./script-result";
import {
  BAD_HEADER_VALUE_RE,
  DEFAULT_THROTTLE,
  MAX_BODY_BYTES,
  MAX_HEADER_VALUE_BYTES,
  MAX_HEADERS,
  MAX_STATUS,
  MIN_STATUS,
  PATH_MAX,
  PATH_RE,
  PATH_TYPES,
  PREFIX_RE,
  RESPONDER_METHODS,
} from "./shared-rules";
import { respondersStore, type ResponderRow } from "./store";
import { MAX_SCRIPT_BYTES } from "../scripts/shared-rules";

export const present = (v: unknown) => v !== undefined && v !== null;
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

export interface NormalizedSettings {
  requestsToTrack: number;
  statusCode: number;
  headers: HeaderList;
  body: string;
  script: string | null;
  secrets: SecretsSelector;
  notifications: { enabled: boolean; throttleSeconds: number } | null;
}

export type CheckedSettings = Omit<NormalizedSettings, "secrets"> & { secrets: ParsedSelector };

export interface NormalizedLocation {
  pathType: PathType;
  path: string;
  prefix: string;
}

export class ResponderRules {
  constructor(
    private readonly rt: Runtime,
    private readonly deps: { secrets: SecretsService },
  ) {}

  location(raw: unknown): NormalizedLocation {
    if (!isPlainObject(raw)) throw invalid("location: must be an object with pathType and path");
    const { pathType, path, subdomainPrefix } = raw;
    if (!present(pathType)) throw invalid("location.pathType: is required");
    if (!(PATH_TYPES as readonly unknown[]).includes(pathType)) throw invalid(`location.pathType: must be one of ${PATH_TYPES.join(", ")}`);
    if (!present(path)) throw invalid("location.path: is required");
    if (typeof path !== "string") throw invalid("location.path: must be a string");
    if (path.length < 1 || path.length > PATH_MAX) throw invalid(`location.path: must be 1 to ${PATH_MAX} characters`);
    if (!path.startsWith("/")) throw invalid("location.path: must start with /");
    if (!PATH_RE.test(path)) throw invalid("location.path: may contain only RFC 3986 path characters (unreserved, %XX, sub-delims, :, @, /)");
    let end = path.length;
    while (end > 1 && path[end - 1] === "/") end--;
    let prefix = "";
    if (present(subdomainPrefix)) {
      if (typeof subdomainPrefix !== "string") throw invalid("location.subdomainPrefix: must be a string or null");
      if (!PREFIX_RE.test(subdomainPrefix))
        throw invalid("location.subdomainPrefix: must be 1 to 36 lower-case letters, digits or -, not starting or ending with -");
      if (this.rt.config.responders.url_style === "path") throw invalid('location.subdomainPrefix: not available with responders.url_style = "path"');
      prefix = subdomainPrefix;
    }
    return { pathType: pathType as PathType, path: path.slice(0, end), prefix };
  }

  method(raw: unknown): ResponderMethod {
    if (!present(raw)) return "ANY";
    if (typeof raw !== "string" || !(RESPONDER_METHODS as readonly string[]).includes(raw))
      throw invalid(`method: must be one of ${RESPONDER_METHODS.join(", ")}`);
    return raw as ResponderMethod;
  }

  enabled(raw: unknown): boolean {
    if (!present(raw)) return true;
    if (typeof raw !== "boolean") throw invalid("enabled: must be a boolean");
    return raw;
  }

  /** Every check of `settings` that needs no stored data; the secrets selector's entries are looked up by
   *  resolveSettings (after the 404 check of an update, supplement §1 check order). */
  settings(user: Pick<AuthUser, "tier">, raw: unknown, limits: TierLimits = tierLimits(this.rt.config, user.tier)): CheckedSettings {
    if (present(raw) && !isPlainObject(raw)) throw invalid("settings: must be an object");
    const s = (raw ?? {}) as Record<string, unknown>;

    let requestsToTrack = 0;
    if (present(s.requestsToTrack)) {
      const max = limits.max_requests_to_track;
      if (!isInt(s.requestsToTrack) || s.requestsToTrack < 0 || s.requestsToTrack > max)
        throw invalid(`settings.requestsToTrack: must be an integer from 0 to ${max} (the ${user.tier} tier maximum)`);
      requestsToTrack = s.requestsToTrack;
    }

    let statusCode = 200;
    if (present(s.statusCode)) {
      if (!isInt(s.statusCode) || s.statusCode < MIN_STATUS || s.statusCode > MAX_STATUS)
        throw invalid(`settings.statusCode: must be an integer from ${MIN_STATUS} to ${MAX_STATUS}`);
      statusCode = s.statusCode;
    }

    let body = "";
    if (present(s.body)) {
      if (typeof s.body !== "string") throw invalid("settings.body: must be a string");
      if (utf8Length(s.body) > MAX_BODY_BYTES) throw invalid(`settings.body: must be at most ${MAX_BODY_BYTES} UTF-8 bytes`);
      body = s.body;
    }

    const headers: HeaderList = [];
    if (present(s.headers)) {
      if (!Array.isArray(s.headers)) throw invalid("settings.headers: must be an array of [name, value] pairs");
      if (s.headers.length > MAX_HEADERS) throw invalid(`settings.headers: at most ${MAX_HEADERS} headers`);
      s.headers.forEach((pair: unknown, i) => {
        const field = `settings.headers[${i}]`;
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string")
          throw invalid(`${field}: must be a [name, value] pair of strings`);
        const [name, value] = pair as [string, string];
        if (!TOKEN_RE.test(name)) throw invalid(`${field}: header name must be an RFC 9110 token`);
        if (BAD_HEADER_VALUE_RE.test(value)) throw invalid(`${field}: header value must not contain CR, LF or NUL`);
        if (utf8Length(value) > MAX_HEADER_VALUE_BYTES) throw invalid(`${field}: header value must be at most ${MAX_HEADER_VALUE_BYTES} bytes`);
        headers.push([name, value]);
      });
    }

    let script: string | null = null;
    if (present(s.script)) {
      if (typeof s.script !== "string") throw invalid("settings.script: must be a string or null");
      const bytes = utf8Length(s.script);
      if (bytes < 1 || bytes > MAX_SCRIPT_BYTES) throw invalid(`settings.script: must be 1 to ${MAX_SCRIPT_BYTES} UTF-8 bytes`);
      script = s.script;
    }

    let notifications: NormalizedSettings["notifications"] = null;
    if (present(s.notifications)) {
      const n = s.notifications;
      if (!isPlainObject(n)) throw invalid("settings.notifications: must be an object {enabled, throttleSeconds?}");
      if (typeof n.enabled !== "boolean") throw invalid("settings.notifications.enabled: must be a boolean");
      const allowed = limits.notification_throttles;
      let throttleSeconds = allowed.includes(DEFAULT_THROTTLE) || allowed.length === 0 ? DEFAULT_THROTTLE : allowed[0]!;
      if (present(n.throttleSeconds)) {
        if (!isInt(n.throttleSeconds) || !allowed.includes(n.throttleSeconds))
          throw invalid(`settings.notifications.throttleSeconds: must be one of ${allowed.join(", ")}`);
        throttleSeconds = n.throttleSeconds;
      }
      if (n.enabled && requestsToTrack === 0)
        throw invalid("settings.notifications.enabled: requires settings.requestsToTrack > 0 (summaries count tracked requests)");
      notifications = { enabled: n.enabled, throttleSeconds };
    }

    const secrets = this.deps.secrets.parseSelector(s.secrets, "settings.secrets");
    return { requestsToTrack, statusCode, headers, body, script, secrets, notifications };
  }

  async resolveSettings(user: AuthUser, checked: CheckedSettings): Promise<NormalizedSettings> {
    return { ...checked, secrets: await this.deps.secrets.resolveSelector(user.id, checked.secrets) };
  }

  /** Writes `s` into `row`; true when the hit-summary count starts over (notifications turned on, or off). */
  applySettings(row: ResponderRow, s: NormalizedSettings, now: number, previous: ResponderRow | undefined): boolean {
    row.requests_to_track = s.requestsToTrack;
    row.status_code = s.statusCode;
    row.headers = s.headers.length > 0 ? JSON.stringify(s.headers) : null;
    row.body = s.body === "" ? null : s.body;
    row.script = s.script;
    row.secrets = selectorToText(s.secrets);
    if (s.notifications === null) {
      // "omitted when never set": a settings object without notifications keeps none.
      row.notify_enabled = null;
      row.notify_throttle = null;
    } else {
      row.notify_enabled = s.notifications.enabled ? 1 : 0;
      row.notify_throttle = s.notifications.throttleSeconds;
    }
    const wasOn = previous?.notify_enabled === 1;
    if (row.notify_enabled === 1 && !wasOn) {
      // Counting starts when notifications are enabled.
      row.notify_count = 0;
      row.notify_from = now;
      return true;
    }
    if (row.notify_enabled !== 1) {
      row.notify_count = 0;
      row.notify_from = null;
      return true;
    }
    return false;
  }

  async checkConflicts(tx: Db, row: ResponderRow, exceptId: string | null): Promise<void> {
    if (await respondersStore.nameTaken(tx, row.user_id, row.name, exceptId)) throw duplicateName("Responder", row.name);
    const clash = (await respondersStore.sameLocation(tx, row.user_id, row.subdomain_prefix, row.path_type, row.path_lower, exceptId)).find((o) =>
      methodsOverlap(o.method, row.method),
    );
    if (clash)
      throw conflict(
        `location: responder "${clash.name}" already serves ${row.path_type} ${row.path} for method ${clash.method}${row.subdomain_prefix ? ` on prefix ${row.subdomain_prefix}` : ""}`,
      );
  }
}
