// The response body of the outbound client (see client.ts): read from the socket under the size cap (or cut there
// with `overflow: "truncate"`, the rest never read), then its content codings undone (gzip, x-gzip, deflate incl.
// raw deflate, br, zstd) with the decoded output capped the same way, so a decompression bomb stops at the cap.
// Owns: nothing between calls. Must never: hold more than the cap in memory (wire or decoded), put a socket read to
// the end of a cut body back into the pool, or echo body bytes into an error message.
import type http from "node:http";
import zlib from "node:zlib";
import { MSG_DECOMPRESS, MSG_TOO_LARGE, MSG_UPSTREAM, OutboundError } from "./errors";
import { mapNetworkError, type Flight } from "./exchange";

interface ReadBody {
  body: Buffer;
  truncated: boolean;
}

/** Body chunks kept up to `cap` bytes (wire bytes, or decoded output). */
class CappedChunks {
  private readonly chunks: Buffer[] = [];
  private total = 0;
  constructor(private readonly cap: number) {}

  /** Keeps `chunk` and answers true when it fits; otherwise false, having kept the part that fits if `cut`. */
  add(chunk: Buffer, cut: boolean): boolean {
    if (this.total + chunk.length <= this.cap) {
      this.total += chunk.length;
      this.chunks.push(chunk);
      return true;
    }
    if (cut) {
      this.chunks.push(chunk.subarray(0, this.cap - this.total));
      this.total = this.cap;
    }
    return false;
  }

  get body(): Buffer {
    return Buffer.concat(this.chunks, this.total);
  }
}

/** Reads the wire body; beyond `cap` it aborts (TOO_LARGE), or with `truncate` keeps the first `cap` bytes and
 *  stops reading (the connection is closed). */
function readBody(flight: Flight, res: http.IncomingMessage, cap: number, truncate: boolean): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const kept = new CappedChunks(cap);
    let settled = false;
    const fail = (e: OutboundError) => {
      if (settled) return;
      settled = true;
      res.destroy();
      flight.req?.destroy();
      reject(e);
    };
    res.on("data", (chunk: Buffer) => {
      if (settled || kept.add(chunk, truncate)) return;
      if (!truncate) return fail(new OutboundError("TOO_LARGE", MSG_TOO_LARGE));
      // The rest is never read: the connection cannot serve another request, so it is closed.
      settled = true;
      res.destroy();
      flight.req?.destroy();
      resolve({ body: kept.body, truncated: true });
    });
    res.once("end", () => {
      if (settled) return;
      settled = true;
      // Read to the end: the socket goes back to its pool and may serve another request, so never destroy it.
      flight.req = null;
      resolve({ body: kept.body, truncated: false });
    });
    res.on("error", (err) => fail(mapNetworkError(err, true)));
    res.once("aborted", () => fail(new OutboundError("NETWORK", `${MSG_UPSTREAM}: connection closed`, "upstream")));
    res.once("close", () => {
      if (!settled && !res.complete) fail(new OutboundError("NETWORK", `${MSG_UPSTREAM}: connection closed`, "upstream"));
    });
  });
}

// ---- decoding ---------------------------------------------------------------------------------------------

type Decoder = (buf: Buffer, opts: zlib.ZlibOptions & zlib.BrotliOptions, cb: (err: Error | null, out: Buffer) => void) => void;
const zstdDecompress = (zlib as unknown as { zstdDecompress?: Decoder }).zstdDecompress;

/** RFC 9110 "deflate" is zlib-wrapped; many servers send raw deflate. Checks the zlib header. */
function zlibWrapped(buf: Buffer): boolean {
  const b0 = buf[0] ?? 0;
  const b1 = buf[1] ?? 0;
  return buf.length >= 2 && (b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0;
}

function decoderFor(coding: string, buf: Buffer): Decoder | undefined {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return zlib.gunzip as Decoder;
    case "deflate":
      return (zlibWrapped(buf) ? zlib.inflate : zlib.inflateRaw) as Decoder;
    case "br":
      return zlib.brotliDecompress as Decoder;
    case "zstd":
      return zstdDecompress;
    default:
      return undefined;
  }
}

function parseCodings(headers: [string, string][]): string[] {
  const out: string[] = [];
  for (const [n, v] of headers) {
    if (n !== "content-encoding") continue;
    for (const t of v.split(",")) {
      const c = t.trim().toLowerCase();
      if (c && c !== "identity") out.push(c);
    }
  }
  return out;
}

type StreamDecoder = (opts: zlib.ZlibOptions & zlib.BrotliOptions) => zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress;
const createZstdDecompress = (zlib as unknown as { createZstdDecompress?: StreamDecoder }).createZstdDecompress;

/** Streaming decoders for `overflow: "truncate"`, flushing at the end so that a cut input decodes as far as it goes. */
function streamDecoderFor(coding: string, buf: Buffer): (() => ReturnType<StreamDecoder>) | undefined {
  const sync = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return () => zlib.createGunzip(sync);
    case "deflate":
      return zlibWrapped(buf) ? () => zlib.createInflate(sync) : () => zlib.createInflateRaw(sync);
    case "br":
      return () => zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    case "zstd":
      return createZstdDecompress ? () => createZstdDecompress({}) : undefined;
    default:
      return undefined;
  }
}

/** Decodes `input` through `stream`, keeping at most `cap` bytes of output; stops the decoder once past them. */
function decodeUpTo(stream: ReturnType<StreamDecoder>, input: Buffer, cap: number, coding: string): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const kept = new CappedChunks(cap);
    let settled = false;
    stream.on("data", (chunk: Buffer) => {
      if (settled || kept.add(chunk, true)) return;
      settled = true;
      stream.destroy();
      resolve({ body: kept.body, truncated: true });
    });
    stream.once("end", () => {
      if (settled) return;
      settled = true;
      resolve({ body: kept.body, truncated: false });
    });
    stream.once("error", () => {
      if (settled) return;
      settled = true;
      reject(new OutboundError("NETWORK", `${MSG_DECOMPRESS} (${coding})`, "upstream"));
    });
    stream.end(input);
  });
}

/** `decode` for `overflow: "truncate"`: output cut at `cap` per coding instead of failing. */
async function decodeTruncating(raw: Buffer, codings: string[], cap: number): Promise<ReadBody | undefined> {
  if (!codings.every((c) => streamDecoderFor(c, raw) !== undefined)) return undefined;
  let out: ReadBody = { body: raw, truncated: false };
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i] as string;
    const make = streamDecoderFor(coding, out.body) as () => ReturnType<StreamDecoder>;
    const next = await decodeUpTo(make(), out.body, cap, coding);
    out = { body: next.body, truncated: out.truncated || next.truncated };
  }
  return out;
}

/** Undoes the content codings (last applied first). Returns undefined when one is unsupported (body kept raw). */
async function decode(raw: Buffer, codings: string[], cap: number): Promise<Buffer | undefined> {
  if (!codings.every((c) => decoderFor(c, raw) !== undefined)) return undefined;
  let buf = raw;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i] as string;
    const fn = decoderFor(coding, buf) as Decoder;
    buf = await new Promise<Buffer>((resolve, reject) => {
      fn(buf, { maxOutputLength: Math.max(1, cap) }, (err, out) => {
        if (!err) return resolve(out);
        if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError) {
          return reject(new OutboundError("TOO_LARGE", MSG_TOO_LARGE));
        }
        reject(new OutboundError("NETWORK", `${MSG_DECOMPRESS} (${coding})`, "upstream"));
      });
    });
    if (buf.length > cap) throw new OutboundError("TOO_LARGE", MSG_TOO_LARGE);
  }
  return buf;
}

// ---- the body of a response -----------------------------------------------------------------------------------

/** The body of `res` (its head read; `method` the request's, `status` and `resHeaders` the response's) under the
 *  cap: refused (TOO_LARGE) or, with `truncate`, cut; then decoded unless `decompress` is false. When it was decoded,
 *  the headers returned rename content-encoding/content-length to x-original-content-encoding/-length. */
export async function responseBody(
  flight: Flight,
  res: http.IncomingMessage,
  method: string,
  status: number,
  resHeaders: [string, string][],
  cap: number,
  truncate: boolean,
  decompress: boolean,
): Promise<{ body: Buffer; headers: [string, string][]; truncated: boolean }> {
  const contentLength = resHeaders.find(([n]) => n === "content-length")?.[1];
  const declared = Number(contentLength ?? "");
  const bodyless = method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200);
  if (!bodyless && !truncate && Number.isFinite(declared) && declared > cap) {
    res.destroy();
    flight.req?.destroy();
    throw new OutboundError("TOO_LARGE", MSG_TOO_LARGE);
  }
  let read: ReadBody;
  if (truncate && cap === 0 && !bodyless && !(contentLength !== undefined && declared === 0)) {
    // Nothing of the body is wanted: do not wait for it (it may be slow or endless).
    res.destroy();
    flight.req?.destroy();
    read = { body: Buffer.alloc(0), truncated: true };
  } else {
    read = await readBody(flight, res, cap, truncate);
  }
  const raw = read.body;
  let truncated = read.truncated;
  let out: Buffer = raw;
  let outHeaders = resHeaders;
  const codings = parseCodings(resHeaders);
  if (decompress && codings.length > 0 && raw.length > 0) {
    let decoded: Buffer | undefined;
    if (truncate) {
      const cut = await decodeTruncating(raw, codings, cap);
      decoded = cut?.body;
      truncated ||= cut?.truncated ?? false;
    } else {
      decoded = await decode(raw, codings, cap);
    }
    if (decoded) {
      out = decoded;
      outHeaders = resHeaders.map(([n, v]): [string, string] =>
        n === "content-encoding" ? ["x-original-content-encoding", v] : n === "content-length" ? ["x-original-content-length", v] : [n, v],
      );
    }
  }
  return { body: out, headers: outHeaders, truncated };
}
