// What every service is built from: configuration, database, clock, secret box and logger. Time and
// randomness are injectable so tests can drive them.
import type { Config, Tier, TierLimits } from "../config/schema";
import type { Db } from "./db/db";
import type { SecretBox } from "./crypto/secret-box";
import type { Logger } from "./log";
import pkg from "../../package.json";

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Runtime {
  config: Config;
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  log: Logger;
  version: string;
}

export const VERSION: string = pkg.version;

/** Seconds the HTTP server keeps a connection without traffic (Bun.serve idleTimeout), also while a handler works;
 *  handlers of long work (scripted responder hits) lift it for their request and restore it before answering. */
export const HTTP_IDLE_TIMEOUT_SEC = 10;

export const nowSec = (clock: Clock) => Math.floor(clock.now() / 1000);

export const tierLimits = (config: Config, tier: Tier): TierLimits => config.subscriptions.tiers[tier];
