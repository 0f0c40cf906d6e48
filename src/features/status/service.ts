// Server status (supplement §21): informational level stored in the database, db health, optional features
// (mail, Chromium, DSA, sign-up and the interaction listeners of §27; the UI reads them).
import { existsSync } from "node:fs";
import { invalid } from "../../platform/core/errors";
import { required } from "../../platform/core/validate";
import type { Runtime } from "../../platform/runtime";
import { STATUS_LEVELS, type Status, type StatusLevel } from "./contract";
import { statusStore } from "./store";

export class StatusService {
  private readonly features: Status["features"];

  constructor(private readonly rt: Runtime) {
    const { smtp, chromium, certificates, security } = rt.config;
    // Probed once: these depend on configuration and installed programs, not on requests.
    this.features = {
      mail: smtp.host !== "",
      chromium: chromium.executable !== "" && existsSync(chromium.executable),
      dsa: certificates.openssl !== "" && Bun.which(certificates.openssl) !== null,
      // Whether public sign-up is open (`security.signup`): the web UI offers the sign-up page only then.
      signup: security.signup === "open",
      // Out-of-band interaction listeners (§24, §27): this build has none yet, so the UI offers none.
      interactions: { dns: false, smtp: false, http: false },
    };
  }

  async get(): Promise<Status> {
    let operational = false;
    let level: StatusLevel = "unavailable";
    try {
      operational = await statusStore.ping(this.rt.db);
      const stored = await statusStore.level(this.rt.db);
      level = operational && stored !== "unavailable" ? "available" : "unavailable";
    } catch (err) {
      this.rt.log.error("status: database check failed", { error: String(err) });
    }
    return { version: this.rt.version, level, db: { operational }, features: this.features };
  }

  /** `serve` records the public URL it answers on, so CLI commands on the same data give links that work. */
  rememberPublicUrl(url: string): Promise<unknown> {
    return statusStore.setPublicUrl(this.rt.db, url);
  }

  /** The public URL `serve` last started with on this database, if any. */
  rememberedPublicUrl(): Promise<string | undefined> {
    return statusStore.publicUrl(this.rt.db);
  }

  async setLevel(raw: unknown): Promise<void> {
    const level = required(raw, "level");
    if (typeof level !== "string" || !(STATUS_LEVELS as readonly string[]).includes(level))
      throw invalid(`level: must be ${STATUS_LEVELS.join(" or ")}`);
    await statusStore.setLevel(this.rt.db, level);
  }
}
