// Test harness: a real server on loopback with a real SQLite file in a fresh temporary data directory (or, with
// SECBOX_TEST_BACKEND=postgres, a fresh PostgreSQL database: backend.ts). Nothing of our own is mocked; tests talk
// HTTP to it. Every API response a test receives through ApiClient is checked against the server's OpenAPI
// document (conformance.ts): a mismatch fails the test that caused it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, createServices, listen, startBackground, stopBackground, type RunningServer, type Services } from "../app";
import { loadConfig } from "../config/load";
import type { Config } from "../config/schema";
import { sessionCookieName } from "../platform/auth/cookies";
import { openRuntime } from "../platform/boot";
import { testDatabaseEnv } from "./backend";
import { createLogger } from "../platform/log";
import type { Clock, Runtime } from "../platform/runtime";
import { conformanceFor } from "./conformance";

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text instead of JSON. */
  raw?: string;
  headers?: Record<string, string>;
  /** Bearer token (API key or JWT). */
  token?: string;
  /** Session cookie token. */
  session?: string;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly defaults: { token?: string; session?: string; cookieName?: string } = {},
  ) {}

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token ?? this.defaults.token;
    const session = opts.session ?? this.defaults.session;
    if (token && !("authorization" in headers)) headers.authorization = `Bearer ${token}`;
    if (session) headers.cookie = `${this.defaults.cookieName ?? "secbox_session"}=${session}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body, redirect: "manual" });
    const text = await res.text();
    // Responder hits (a Host header of their own) answer by the responder's rules, not the API document.
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "host"))
      (await conformanceFor(this.baseUrl)).check(method, this.baseUrl + path, res.status, res.headers.get("content-type") ?? "", text);
    let json: any;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  get = <T = any>(path: string, opts?: RequestOptions) => this.request<T>("GET", path, opts);
  post = <T = any>(path: string, body?: unknown, opts?: RequestOptions) => this.request<T>("POST", path, { ...opts, body });
  put = <T = any>(path: string, body?: unknown, opts?: RequestOptions) => this.request<T>("PUT", path, { ...opts, body });
  delete = <T = any>(path: string, opts?: RequestOptions) => this.request<T>("DELETE", path, opts);
}

export interface TestServerOptions {
  /** SECBOX_* style overrides, e.g. { SECBOX_SECURITY_OPERATORS: "op@example.com" }. */
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a data directory (restart tests); it is then not deleted on stop. */
  dataDir?: string;
  /** Listen on this port instead of a free one (a test whose `server.public_url` must name the real port). */
  port?: number;
}

export interface TestUser {
  id: string;
  email: string;
  handle: string;
  session: string;
  client: ApiClient;
}

export interface TestServer {
  url: string;
  config: Config;
  rt: Runtime;
  services: Services;
  dataDir: string;
  /** Anonymous client. */
  anon: ApiClient;
  /**
   * Creates an activated user with password "correct horse battery" and a signed-in session client, as an
   * operator would (the email counts as proven, so a listed email makes it an operator, supplement §3.5).
   */
  createUser(email?: string, opts?: { tier?: Config["subscriptions"]["default_tier"] }): Promise<TestUser>;
  stop(): Promise<void>;
}

let counter = 0;

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "secbox-test-"));
  const database = await testDatabaseEnv(dataDir, !opts.dataDir);
  const config = loadConfig({
    env: { SECBOX_SERVER_DATA_DIR: dataDir, SECBOX_SERVER_PORT: "7070", SECBOX_SERVER_LOG_LEVEL: "error", ...database.env, ...opts.env },
    file: "",
  });
  const rt = await openRuntime(config, { clock: opts.clock, log: createLogger("error") });
  const services = createServices(rt);
  const app = createApp(services);
  const server: RunningServer = listen(app, services, "127.0.0.1", opts.port ?? 0);
  await startBackground(services);
  const anon = new ApiClient(server.url);
  return {
    url: server.url,
    config,
    rt,
    services,
    dataDir,
    anon,
    async createUser(email, userOpts = {}) {
      const row = await services.users.create({
        email: email ?? `user${++counter}-${Date.now()}@example.com`,
        password: "correct horse battery",
        tier: userOpts.tier,
        emailProof: "operator",
      });
      const session = await services.users.createSession(row.id);
      return {
        id: row.id,
        email: row.email,
        handle: row.handle,
        session,
        client: new ApiClient(server.url, { session, cookieName: sessionCookieName(config) }),
      };
    },
    async stop() {
      await server.stop();
      await stopBackground(services);
      await rt.close();
      await database.drop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
