// Chromium's command-line flags for a locked-down host, declared once: the page-tracker engine launches its shared
// browser with them (browser.ts launchArgs, which adds the deny-all proxy, no name resolution and the WebRTC
// policy), and the browser tests launch theirs with the same list (scripts/e2e/harness.ts and
// site-isolation.e2e.test.ts import this module; they add their own host-resolver rules). Import-free, so a test
// harness can take it without loading the engine.

/** The flags every Secbox-launched Chromium gets: no sandbox only as root (Chromium refuses to start otherwise), no
 *  GPU, no QUIC, no first-run or background traffic of its own (component updates, sync, domain reliability,
 *  phishing lists, crash reports), /dev/shm not used, permission prompts denied. */
export function lockedDownFlags(asRoot: boolean): string[] {
  return [
    ...(asRoot ? ["--no-sandbox"] : []),
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--deny-permission-prompts",
  ];
}

/** Chromium features every launch turns off: load exactly the URL given (no automatic https upgrade of http URLs),
 *  and no media router, translation, optimization hints or autofill server traffic. */
export const DISABLED_FEATURES = [
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "MediaRouter",
  "Translate",
  "OptimizationHints",
  "AutofillServerCommunication",
] as const;

/** `--disable-features=` with DISABLED_FEATURES and `extra`. */
export function disableFeaturesFlag(extra: readonly string[] = []): string {
  return `--disable-features=${[...DISABLED_FEATURES, ...extra].join(",")}`;
}
