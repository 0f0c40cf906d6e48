// The resource inventory of a page run (`resources: true`, supplement §16.2): every script and stylesheet the page
// loaded over http(s) with a 2xx answer, by URL, with its size and SHA-256, sorted (type, then URL).
// Owns: RunState.resources. Must never: keep a response body (only its size and hash), or wait for more than the
// bounded list of reads it started (at most 500).
import { createHash } from "node:crypto";
import type { HTTPResponse, Page } from "puppeteer-core";
import type { PageResource } from "./run-types";
import type { RunState } from "./run-state";

/** Starts recording the scripts and stylesheets `page` loads (before navigating). */
export function watchResources(page: Page, st: RunState): void {
  const job = { pending: [] as Promise<void>[], items: new Map<string, PageResource>() };
  st.resources = job;
  page.on("response", (resp: HTTPResponse) => {
    const type = resp.request().resourceType();
    if (type !== "script" && type !== "stylesheet") return;
    const url = resp.url();
    if (!/^https?:/i.test(url) || resp.status() < 200 || resp.status() > 299) return;
    const key = `${type} ${url}`;
    if (job.items.has(key) || job.pending.length > 500) return;
    job.pending.push(
      resp
        .buffer()
        .then((buf) => {
          if (job.items.has(key)) return;
          job.items.set(key, { url, type, size: buf.length, sha256: createHash("sha256").update(buf).digest("hex") });
        })
        .catch((err: Error) => st.log("warn", `Could not read ${type} ${url}: ${err.message}`)),
    );
  });
}

/** The inventory once the page is done (the reads still in flight awaited). */
export async function resourceList(job: RunState["resources"]): Promise<PageResource[]> {
  if (job) await Promise.all(job.pending);
  return [...(job?.items.values() ?? [])].sort((a, b) =>
    a.type !== b.type ? (a.type < b.type ? -1 : 1) : a.url < b.url ? -1 : a.url > b.url ? 1 : 0,
  );
}
