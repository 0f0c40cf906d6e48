#!/usr/bin/env bun
// Dev helper (not a test): screenshots of every page in light and dark, at 1366×768 and 390×844, into
// /tmp/ui-shots (or the folder given), with each page's problems and axe findings printed. Look at them before
// changing how the UI looks. `bun scripts/e2e/screenshots.ts [outdir] [--only prefix[,prefix…]]` (the pages whose
// name starts with one of them)
import { mkdirSync } from "node:fs";
import { axeViolations, goto, startUiHarness, waitForText } from "./harness";
import { PUBLIC_PAGES, seedPages } from "./pages";
import { startTrackerFixtures, TRACKER_SERVER_ENV } from "./tracker-fixtures";

const out = Bun.argv[2] && !Bun.argv[2].startsWith("--") ? Bun.argv[2] : "/tmp/ui-shots";
const only = Bun.argv.includes("--only") ? Bun.argv[Bun.argv.indexOf("--only") + 1] : undefined;
mkdirSync(out, { recursive: true });

const h = await startUiHarness({ env: TRACKER_SERVER_ENV });
const fixtures = startTrackerFixtures();
try {
  const { user, pages } = await seedPages(h, fixtures);
  for (const [name, url, text, then] of pages) {
    if (only && !only.split(",").some((prefix) => name.startsWith(prefix))) continue;
    for (const scheme of ["light", "dark"] as const) {
      for (const [w, hgt, label] of [
        [1366, 768, "desktop"],
        [390, 844, "phone"],
      ] as const) {
        const publicPage = PUBLIC_PAGES.includes(name);
        const ui = await h.open({ user: publicPage ? undefined : user, width: w, height: hgt, colorScheme: scheme });
        await goto(ui, h.url + url);
        if (text) await waitForText(ui.page, text);
        if (then) await then(ui.page);
        await Bun.sleep(400);
        await ui.page.screenshot({ path: `${out}/${name}-${scheme}-${label}.png`, fullPage: label === "desktop" });
        const axe = label === "desktop" ? await axeViolations(ui.page) : [];
        if (ui.problems.length || axe.length) console.log(`${name} ${scheme} ${label}:`, [...ui.problems, ...axe].join("\n  "));
        await ui.context.close();
      }
    }
  }
  console.log(`screenshots in ${out}`);
} finally {
  await h.stop();
  fixtures.stop();
}
