// What a page run produces besides its logs (see engine.ts): the extracted value (the user's extractor runs inside the
// page in an isolated world, extractor.ts; with `resources` it is bundled with the resource inventory) and the debug
// screenshots.
// Owns: RunState.screenshots/.screenshotBytes (at most MAX_SCREENSHOT_BYTES per run). Must never: run the extractor
// in this process, or let a screenshot hold a run past its deadline by more than a second.
import type { PageRunRequest, PageScreenshot } from "./run-types";
import { runExtractor } from "./extractor";
import { resourceList } from "./resources";
import type { RunState } from "./run-state";
import type { Prepared } from "./run-types";

const MAX_SCREENSHOT_BYTES = 5 * 1024 * 1024;

/** The run's stored bytes (§16.2/§17.1): the extractor's value, or `{content, resources}` with the inventory. */
export async function extract(req: PageRunRequest, st: RunState): Promise<Uint8Array> {
  const context: { previousContent?: unknown; params: { secrets: Record<string, string> } } = { params: { secrets: req.secrets } };
  if (req.previousContent !== undefined) context.previousContent = req.previousContent;
  const job = st.resources;
  const out = await runExtractor((st.prep as Prepared).cdp, req.extractor, context);
  st.check();
  if (!req.resources) return out.bytes;
  const resources = await resourceList(job);
  return new TextEncoder().encode(JSON.stringify({ content: out.json, resources }));
}

/** A PNG of the viewport for `_debug`, best effort, within the run's byte budget. */
export async function screenshot(st: RunState, label: PageScreenshot["label"], timeoutMs: number): Promise<void> {
  const page = st.prep?.page;
  if (!page || page.isClosed()) return;
  try {
    const shot = page.screenshot({ type: "png", encoding: "base64" }) as Promise<string>;
    shot.catch(() => {});
    const data = await Promise.race([shot, new Promise<null>((r) => setTimeout(() => r(null), Math.min(timeoutMs, st.remaining() + 1000)))]);
    if (typeof data !== "string") return;
    const size = Math.floor((data.length * 3) / 4);
    if (st.screenshotBytes + size > MAX_SCREENSHOT_BYTES) return;
    st.screenshotBytes += size;
    st.screenshots.push({ label, mimeType: "image/png", data });
  } catch {
    /* best effort */
  }
}
