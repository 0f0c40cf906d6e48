// Per-user settings (supplement §9): a flat object of known keys. The setter maps key → new value, or null
// to remove; every key is validated before anything is applied, and the stored object stays ≤ 64 KiB.
import type { Db } from "../../platform/db/db";
import { invalid } from "../../platform/core/errors";
import { utf8Length } from "../../platform/core/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { SettingKey, UserSettings } from "./contract";
import { MAX_SETTINGS_BYTES, UI_THEMES } from "./shared-rules";
import { knownSettings, settingsStore } from "./store";

export { SETTING_KEYS, type SettingKey } from "./contract";

export const UNSUBSCRIBED_KEY = "notifications.unsubscribed";

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

/** Every known key (contract.ts UserSettings) with its validator. */
const SETTINGS: Record<SettingKey, Validator> = {
  "common.uiTheme": (v, key) => {
    if (typeof v !== "string" || !(UI_THEMES as readonly string[]).includes(v)) throw invalid(`${key}: must be one of ${UI_THEMES.join(", ")}`);
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
    return this.read(this.rt.db, userId);
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
    const current: Record<string, unknown> = o.replace ? {} : { ...(await this.read(tx, userId)) };
    for (const [key, value] of changes) {
      if (value === undefined) delete current[key];
      else current[key] = value;
    }
    const merged = knownSettings(current);
    // The stored text is this JSON (store.ts).
    const size = utf8Length(JSON.stringify(merged));
    if (o.enforceSize && size > MAX_SETTINGS_BYTES)
      throw invalid(`settings: total size must be at most ${MAX_SETTINGS_BYTES} bytes (would be ${size})`);
    await settingsStore.put(tx, userId, merged, nowSec(this.rt.clock));
    return merged;
  }

  /** The stored settings; a corrupt row reads as `{}` (and is logged). */
  private async read(db: Db, userId: string): Promise<UserSettings> {
    const settings = await settingsStore.get(db, userId);
    if (settings === null) this.rt.log.error("settings: stored settings are not valid JSON", { userId });
    return settings ?? {};
  }
}
