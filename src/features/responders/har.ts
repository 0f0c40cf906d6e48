// The history window the UI polls with (`_history?after=&before=&limit=`, an addition) and the HAR 1.2 export
// (§11.12) of tracked request records (their API shape, §11.10, is the store's toTrackedRequest). Pure mapping from
// stored rows and query text; no I/O.
// A HAR can hold 1,000 records with two bodies of max_tracked_body_bytes each: HarDocument writes it entry by entry
// as the response is read (`chunks()`), never as one string, and never holds more than about a page (RENDER_BYTES)
// of records: it takes them from a HarSource page by page (har-pages.ts reads them; an array serves tests). Decoding
// and serializing 1 MB bodies costs tens of ms per entry, so with a work pool the entries are rendered there
// (`harEntriesTask`, a page per task, under the owner's share) and the event loop only passes the bytes on — on
// SQLite the work thread also reads the page itself (its own connection), so the records never reach the event
// loop; without a pool, one entry per turn of the loop.
import { invalid } from "../../platform/core/errors";
import { isUuid } from "../../platform/core/ids";
import { stripInvisible } from "../../platform/core/validate";
import type { HistoryWindow } from "./contract";
import { HISTORY_MAX_LIMIT } from "./shared-rules";
import type { HeaderList } from "./script-result";
import { headerListOf, type TrackedRow } from "./store";
import { TimeSlice } from "../../platform/work/slice";
import { implement, taskRef, transfer, type TaskImpl, type TaskRef } from "../../platform/work/task";
import type { Work } from "../../platform/work/pool";

/** The window in a `_history` query (400 naming the parameter); an empty query is the whole history. */
export function parseHistoryWindow(q: Record<string, unknown>): HistoryWindow {
  const w: HistoryWindow = {};
  for (const k of ["after", "before"] as const) {
    const v = q[k];
    if (v === undefined || v === "") continue;
    if (!isUuid(v)) throw invalid(`${k}: must be a record id (UUID)`);
    w[k] = v.toLowerCase();
  }
  const limit = q.limit;
  if (limit !== undefined && limit !== "") {
    const n = typeof limit === "string" && /^\d{1,7}$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= HISTORY_MAX_LIMIT)) throw invalid(`limit: must be an integer from 1 to ${HISTORY_MAX_LIMIT}`);
    w.limit = n;
  }
  return w;
}

// ---- HAR ----

const TEXTUAL_RE = /^text\/|json|xml|javascript|^application\/x-www-form-urlencoded/;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

const headerValue = (headers: HeaderList, name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1] ?? "";

/** `text` when valid UTF-8 with a textual type, else base64 with `encoding: "base64"` (§11.12). */
function harBody(bytes: Uint8Array | null, mimeType: string): { text: string; encoding?: "base64" } {
  const data = bytes ?? new Uint8Array(0);
  const type = mimeType.split(";")[0]!.trim().toLowerCase();
  if (TEXTUAL_RE.test(type)) {
    try {
      return { text: strictUtf8.decode(data) };
    } catch {
      // not valid UTF-8: fall through to base64
    }
  }
  return { text: Buffer.from(data).toString("base64"), encoding: "base64" };
}

function queryString(rawQuery: string | null): { name: string; value: string }[] {
  if (!rawQuery) return [];
  return rawQuery
    .split("&")
    .filter((part) => part !== "")
    .map((part) => {
      const eq = part.indexOf("=");
      const [name, value] = eq === -1 ? [part, ""] : [part.slice(0, eq), part.slice(eq + 1)];
      return { name: decodeQueryComponent(name), value: decodeQueryComponent(value) };
    });
}

export function decodeQueryComponent(s: string): string {
  const plus = s.replace(/\+/g, " ");
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

const toHarHeaders = (headers: HeaderList) => headers.map(([name, value]) => ({ name, value }));

export interface HarOptions {
  /** Responder URL without its location path: `<scheme>://<host>` or `<public_url>/api/webhooks/<handle>`. */
  baseUrl: string;
  version: string;
}

/** Where a HAR's records come from, oldest first. */
export interface HarSource {
  /** The records after `after` (a record id; null = from the first), about RENDER_BYTES of them; [] at the end. */
  page(after: string | null): Promise<TrackedRow[]>;
  /** When set (SQLite), a work thread reads and renders each page itself: the task and its input for a page. */
  onThread?: (after: string | null) => { task: TaskRef<HarPageInput, HarPageOutput>; input: HarPageInput };
}

/** A work thread's page: what it reads, and the rendered entries (comma-separated JSON bytes) with the last id. */
export interface HarPageInput {
  responderId: string;
  after: string | null;
  maxBytes: number;
  opts: HarOptions;
}
export interface HarPageOutput {
  bytes: ArrayBuffer;
  /** Id of the page's last record; null when there was none left. */
  last: string | null;
}

/** The records of an array, as a source (tests; small documents). */
const arraySource = (rows: TrackedRow[]): HarSource => {
  let handed = false;
  return { page: async () => (handed ? [] : ((handed = true), rows)) };
};

/** HAR 1.2 document of the records, oldest first (`rows` must already be oldest first, or a paged source). */
export function buildHar(rows: TrackedRow[] | HarSource, opts: HarOptions): HarDocument {
  return new HarDocument(Array.isArray(rows) ? arraySource(rows) : rows, opts, Array.isArray(rows) ? rows : undefined);
}

/** A HAR 1.2 document, serialized lazily: `chunks()` gives the text piece by piece (one page of entries at a time);
 *  `JSON.stringify(doc)` (toJSON) the whole text, for a document built from an array only. */
export class HarDocument {
  private written = false;

  constructor(
    private readonly source: HarSource,
    private readonly opts: HarOptions,
    private readonly inMemory?: TrackedRow[],
  ) {}

  private head() {
    return { version: "1.2", creator: { name: "Secbox", version: this.opts.version } };
  }

  toJSON() {
    if (!this.inMemory) throw new Error("a paged HAR document is only written through chunks()");
    return { log: { ...this.head(), entries: this.inMemory.map((r) => harEntry(r, this.opts)) } };
  }

  /**
   * The same text as JSON.stringify of the whole document, written page by page; once only. With `pool`, each page is
   * rendered there (and, when the source says so, read there too) under `pool.owner`'s share.
   */
  async *chunks(pool?: { work: Work; owner: string }): AsyncGenerator<string | Uint8Array> {
    if (this.written) throw new Error("a HAR document is written once");
    this.written = true;
    const slice = new TimeSlice();
    const head = JSON.stringify({ log: { ...this.head(), entries: [] } });
    yield head.slice(0, -3); // ..."entries":[
    let first = true;
    let after: string | null = null;
    for (;;) {
      if (pool && this.source.onThread) {
        const { task, input } = this.source.onThread(after);
        const out = await pool.work.run(pool.owner, task, input);
        if (out.last === null) break;
        if (!first) yield ",";
        yield new Uint8Array(out.bytes);
        first = false;
        after = out.last;
        continue;
      }
      const rows = await this.source.page(after);
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      if (pool) {
        // bodies that own their buffer move to the thread instead of being copied (the rows are done with here)
        const moved = rows
          .flatMap((r) => [r.body, r.response_body])
          .filter((b): b is Uint8Array => !!b && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.byteLength > 0);
        const transfer = [...new Set(moved.map((b) => b.buffer as ArrayBuffer))];
        if (!first) yield ",";
        yield new Uint8Array(await pool.work.run(pool.owner, harEntriesTask, { rows, opts: this.opts }, { transfer }));
        first = false;
      } else {
        for (let i = 0; i < rows.length; i++) {
          const text = JSON.stringify(harEntry(rows[i]!, this.opts));
          yield first ? text : `,${text}`;
          first = false;
          rows[i] = undefined as unknown as TrackedRow;
          await slice.tick();
        }
      }
    }
    yield "]}}";
  }
}

/** Stored bytes of records per page (one page per work task; at least one record). */
export const RENDER_BYTES = 1 << 20;

/** Entries of rows as comma-separated JSON bytes (a buffer that can be moved between threads). */
export function renderEntries(rows: TrackedRow[], opts: HarOptions): ArrayBuffer {
  const bytes = new TextEncoder().encode(rows.map((r) => JSON.stringify(harEntry(r, opts))).join(","));
  return bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
}

/** HAR entries of rows as comma-separated JSON bytes, on a work thread (listed by src/work-tasks.ts). */
export const harEntriesTask = taskRef<{ rows: TrackedRow[]; opts: HarOptions }, ArrayBuffer>("responders.harEntries");

export const harTasks: TaskImpl[] = [
  implement(harEntriesTask, ({ rows, opts }) => {
    const buf = renderEntries(rows, opts);
    return transfer(buf, [buf]);
  }),
];

function harEntry(r: TrackedRow, opts: HarOptions) {
  const reqHeaders = headerListOf(r.headers);
  const reqMime = headerValue(reqHeaders, "content-type");
  const request = {
    method: r.method,
    url: `${opts.baseUrl}${r.path}${r.raw_query ? `?${r.raw_query}` : ""}`,
    httpVersion: "HTTP/1.1",
    cookies: [],
    headers: toHarHeaders(reqHeaders),
    queryString: queryString(r.raw_query),
    ...(r.body_size > 0 ? { postData: { mimeType: reqMime, ...harBody(r.body, reqMime) } } : {}),
    headersSize: -1,
    bodySize: r.body_size,
  };
  let response;
  if (r.response_status !== null) {
    const resHeaders = headerListOf(r.response_headers);
    const resMime = headerValue(resHeaders, "content-type");
    response = {
      status: r.response_status,
      statusText: "",
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: toHarHeaders(resHeaders),
      // a response sent without a body (HEAD, 204, 304: recorded with bodySize 0) has no text
      content: { size: r.response_body_size ?? 0, mimeType: resMime, ...((r.response_body_size ?? 0) > 0 ? harBody(r.response_body, resMime) : {}) },
      redirectURL: "",
      headersSize: -1,
      bodySize: r.response_body_size ?? 0,
    };
  } else {
    response = {
      status: 0,
      statusText: "Not tracked",
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: [],
      content: { size: 0, mimeType: "" },
      redirectURL: "",
      headersSize: -1,
      bodySize: -1,
    };
  }
  return {
    startedDateTime: new Date(r.created_at_ms ?? r.created_at * 1000).toISOString(),
    time: r.duration_ms,
    request,
    response,
    cache: {},
    timings: { send: 0, wait: r.duration_ms, receive: 0 },
  };
}

/** `attachment; filename="<name>-history.har"; filename*=UTF-8''…` (§11.12). Bidi controls and zero-width characters
 *  are dropped first (a name stored before names refused them must not make `x\u202Erah.exe` look like another file). */
export function harContentDisposition(name: string): string {
  const file = `${stripInvisible(name)}-history.har`;
  const ascii = file.replace(/[^A-Za-z0-9._-]/g, "_");
  const star = encodeURIComponent(file).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${star}`;
}
