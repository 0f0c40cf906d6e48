// Per-user settings (supplement §9): a flat object of known keys. The setter maps key → new value, or null
// to remove; every key is validated before anything is applied, and the stored object stays ≤ 64 KiB.
import type { Db } from "../../platform/db/db";
import { invalid } from "../../platform/http/errors";
import { utf8Length } from "../../platform/http/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import { settingsStore } from "./store";

export const MAX_SETTINGS_BYTES = 65_536;
export const UNSUBSCRIBED_KEY = "notifications.unsubscribed";

export interface UserSettings {
  "common.uiTheme"?: "light" | "dark" | "system";
  "common.sidebarCollapsed"?: { nav?: boolean; sections?: string[] };
  "common.globalScopeTagIds"?: string[];
  "certificates.doNotShowSelfSignedWarning"?: boolean;
  "certificates.doNotShowPrivateKeysWarning"?: boolean;
  "notifications.unsubscribed"?: boolean;
}
export type SettingKey = keyof UserSettings;

type Validator = (value: unknown, key: string) => unknown;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const bool: Validator = (v, key) => {
  if (typeof v !== "boolean") throw invalid(`${key}: must be a boolean or null`);
  return v;
};

const stringArray: Validator = (v, key) => {
  if (!Array.isArray(v)) throw invalid(`${key}: must be an array of strings`);
  v.forEach((item, i) => {
    if (typeof item !== "string") throw invalid(`${key}[${i}]: must be a string`);
  });
  return [...v];
};

const THEMES = ["light", "dark", "system"];

/** Every known key with its validator, in the order keys appear in responses. */
const SETTINGS: Record<SettingKey, Validator> = {
  "common.uiTheme": (v, key) => {
    if (typeof v !== "string" || !THEMES.includes(v)) throw invalid(`${key}: must be one of ${THEMES.join(", ")}`);
    return v;
  },
  "common.sidebarCollapsed": (v, key) => {
    if (!isObject(v)) throw invalid(`${key}: must be an object {nav?: boolean, sections?: string[]}`);
    // Only the known members are kept; unknown members are ignored like any unknown request field.
    const out: { nav?: boolean; sections?: string[] } = {};
    if (v.nav != null) out.nav = bool(v.nav, `${key}.nav`) as boolean;
    if (v.sections != null) out.sections = stringArray(v.sections, `${key}.sections`) as string[];
    return out;
  },
  "common.globalScopeTagIds": stringArray,
  "certificates.doNotShowSelfSignedWarning": bool,
  "certificates.doNotShowPrivateKeysWarning": bool,
  "notifications.unsubscribed": bool,
};
const KEYS = Object.keys(SETTINGS) as SettingKey[];
/** The known keys, in response order. */
export const SETTING_KEYS: readonly SettingKey[] = KEYS;

/** A validated change: a new value, or `undefined` to remove the key. */
type Change = [SettingKey, unknown];

/** Validates a whole setter; throws on the first unknown key or invalid value (so nothing is applied). */
export function validateSetter(setter: unknown): Change[] {
  if (!isObject(setter)) throw invalid("body: must be a JSON object mapping setting keys to values");
  return Object.entries(setter).map(([key, value]): Change => {
    if (!Object.hasOwn(SETTINGS, key)) throw invalid(`${key}: unknown setting`);
    const k = key as SettingKey;
    return [k, value === null ? undefined : SETTINGS[k](value, k)];
  });
}

export class SettingsService {
  constructor(private readonly rt: Runtime) {}

  /** The stored settings, `{}` when none. */
  async get(userId: string): Promise<UserSettings> {
    return this.parse(await settingsStore.get(this.rt.db, userId), userId);
  }

  /** Applies a setter from the API; returns the full merged object. */
  async set(userId: string, setter: unknown): Promise<UserSettings> {
    const changes = validateSetter(setter);
    if (changes.length === 0) return this.get(userId);
    return this.apply(userId, changes, true);
  }

  async isUnsubscribed(userId: string): Promise<boolean> {
    return (await this.get(userId))[UNSUBSCRIBED_KEY] === true;
  }

  /** Used by unsubscribe links (supplement §10.3); never refused for size, so unsubscribing always works. */
  async setUnsubscribed(userId: string, value: boolean): Promise<void> {
    await this.apply(userId, [[UNSUBSCRIBED_KEY, value]], false);
  }

  private apply(userId: string, changes: Change[], enforceSize: boolean): Promise<UserSettings> {
    return this.rt.db.tx((tx) => this.write(tx, userId, changes, { enforceSize, replace: false }));
  }

  /** Import (features/user-data), inside its transaction: `changes` (from validateSetter) merged into the stored
   *  settings, or replacing them all (`replace`). The 64 KiB limit applies. */
  async importApply(tx: Db, userId: string, changes: Change[], replace: boolean): Promise<void> {
    await this.write(tx, userId, changes, { enforceSize: true, replace });
  }

  /** Applies `changes` to the stored settings (or to none, `replace`) and stores the result in key order. */
  private async write(tx: Db, userId: string, changes: Change[], o: { enforceSize: boolean; replace: boolean }): Promise<UserSettings> {
    const current: Record<string, unknown> = o.replace ? {} : { ...this.parse(await settingsStore.get(tx, userId), userId) };
    for (const [key, value] of changes) {
      if (value === undefined) delete current[key];
      else current[key] = value;
    }
    const merged: Record<string, unknown> = {};
    for (const key of KEYS) if (current[key] !== undefined) merged[key] = current[key];
    const data = JSON.stringify(merged);
    const size = utf8Length(data);
    if (o.enforceSize && size > MAX_SETTINGS_BYTES) throw invalid(`settings: total size must be at most ${MAX_SETTINGS_BYTES} bytes (would be ${size})`);
    if (Object.keys(merged).length === 0) await settingsStore.remove(tx, userId);
    else await settingsStore.put(tx, userId, data, nowSec(this.rt.clock));
    return merged as UserSettings;
  }

  /** Stored JSON → object of known keys (anything else is dropped, a corrupt row reads as `{}`). */
  private parse(data: string | undefined, userId: string): UserSettings {
    if (data === undefined) return {};
    let raw: unknown;
    try {
      raw = JSON.parse(data);
    } catch {
      this.rt.log.error("settings: stored settings are not valid JSON", { userId });
      return {};
    }
    const out: Record<string, unknown> = {};
    if (isObject(raw)) for (const key of KEYS) if (raw[key] !== undefined && raw[key] !== null) out[key] = raw[key];
    return out as UserSettings;
  }
}
