// A minimal HTTP/1.1 keep-alive client on node:net for the fairness benchmark's attacker: it binds its sockets to
// a local address of its own (127.0.0.2: another client as far as the server's per-source caps can tell, which
// Bun's fetch cannot do), costs little per request (a thousand connections from one process), and reports what
// came back as it is (status, `Connection: close`, a reset). Content-Length and chunked bodies; nothing else of
// HTTP is needed here. Loopback only.
import { connect, type Socket } from "node:net";

export interface Req {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface Res {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const CRLF2 = Buffer.from("\r\n\r\n");

/** One connection, one request at a time; reconnects after a close. */
export class Conn {
  private sock: Socket | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private closed = true;
  private error: Error | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly localAddress: string,
  ) {}

  private async open(): Promise<void> {
    this.buf = Buffer.alloc(0);
    this.error = null;
    const sock = connect({ host: this.host, port: this.port, localAddress: this.localAddress, noDelay: true });
    this.sock = sock;
    this.closed = false;
    sock.on("data", (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    const end = (err?: Error) => {
      if (this.sock !== sock) return;
      this.closed = true;
      if (err) this.error = err;
      this.wake?.();
    };
    sock.on("close", () => end());
    sock.on("end", () => end());
    sock.on("error", (err) => end(err));
    await new Promise<void>((resolve, reject) => {
      sock.once("connect", resolve);
      sock.once("error", reject);
    });
  }

  private wait(): Promise<void> {
    return new Promise((r) => (this.wake = r));
  }

  /** Bytes until `n` are buffered (or the connection ends: an error). */
  private async need(n: number): Promise<void> {
    while (this.buf.length < n) {
      if (this.closed) throw this.error ?? new Error("connection closed before the response ended");
      await this.wait();
    }
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  private async line(): Promise<string> {
    for (;;) {
      const i = this.buf.indexOf("\r\n");
      if (i >= 0) {
        const l = this.take(i + 2).toString("latin1", 0, i);
        return l;
      }
      await this.need(this.buf.length + 1);
    }
  }

  close(): void {
    this.sock?.destroy();
    this.sock = null;
    this.closed = true;
  }

  async request(req: Req): Promise<Res> {
    if (this.closed || this.sock === null) await this.open();
    const body =
      req.body === undefined
        ? undefined
        : typeof req.body === "string"
          ? Buffer.from(req.body)
          : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
    let head = `${req.method ?? "GET"} ${req.path} HTTP/1.1\r\n`;
    const headers = { ...req.headers };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "host")) headers.host = `${this.host}:${this.port}`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    if (body !== undefined) head += `content-length: ${body.length}\r\n`;
    head += "\r\n";
    this.sock!.write(body === undefined ? head : Buffer.concat([Buffer.from(head, "latin1"), body]));

    // head
    let end: number;
    for (;;) {
      end = this.buf.indexOf(CRLF2);
      if (end >= 0) break;
      await this.need(this.buf.length + 1);
    }
    const lines = this.take(end + 4)
      .toString("latin1", 0, end)
      .split("\r\n");
    const status = Number(lines[0]!.split(" ")[1]);
    const out: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const c = l.indexOf(":");
      if (c > 0) out[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
    }
    // body
    let bytes: Buffer;
    if (req.method === "HEAD" || status === 204 || status === 304) bytes = Buffer.alloc(0);
    else if (out["transfer-encoding"]?.toLowerCase().includes("chunked")) {
      const parts: Buffer[] = [];
      for (;;) {
        const size = parseInt((await this.line()).split(";")[0]!, 16);
        if (!Number.isFinite(size)) throw new Error("bad chunk size");
        if (size === 0) {
          while ((await this.line()) !== "");
          break;
        }
        await this.need(size + 2);
        parts.push(Buffer.from(this.take(size)));
        this.take(2);
      }
      bytes = Buffer.concat(parts);
    } else if (out["content-length"] !== undefined) {
      const n = Number(out["content-length"]);
      await this.need(n);
      bytes = Buffer.from(this.take(n));
    } else {
      // read to close
      while (!this.closed) await this.wait();
      bytes = this.take(this.buf.length);
    }
    if (out.connection?.toLowerCase() === "close") this.close();
    return { status, headers: out, body: bytes };
  }
}
