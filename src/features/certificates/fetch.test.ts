// POST /api/certificates/_fetch (supplement §12.5) against a local HTTPS server presenting leaf + intermediate.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { opensslOk, scratch } from "../../tests/fixtures/certificates";

const FETCH = "/api/certificates/_fetch";
const tmp = scratch();
let open: TestServer; // network.allow_private_targets = true
let guarded: TestServer; // default: private targets refused
let openUser: TestUser;
let guardedUser: TestUser;
let https: HttpsServer;
let garbage: TcpServer;
let leafPem: string;
let intermediatePem: string;
let httpsPort: number;
let garbagePort: number;
let closedPort: number;

/** Root → intermediate → leaf (CN/SAN localhost), EC P-256, made with the openssl program. */
function makeChain() {
  const p = (name: string) => join(tmp.dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  tmp.file("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
  tmp.file("leaf.ext", "basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n");
  opensslOk(["req", "-x509", ...ec, "-keyout", p("root.key"), "-out", p("root.pem"), "-subj", "/CN=Secbox Test Root", "-days", "2"]);
  opensslOk(["req", ...ec, "-keyout", p("int.key"), "-out", p("int.csr"), "-subj", "/CN=Secbox Test Intermediate"]);
  opensslOk([
    "x509",
    "-req",
    "-in",
    p("int.csr"),
    "-CA",
    p("root.pem"),
    "-CAkey",
    p("root.key"),
    "-set_serial",
    "2",
    "-days",
    "2",
    "-extfile",
    p("ca.ext"),
    "-out",
    p("int.pem"),
  ]);
  opensslOk(["req", ...ec, "-keyout", p("leaf.key"), "-out", p("leaf.csr"), "-subj", "/CN=localhost"]);
  opensslOk([
    "x509",
    "-req",
    "-in",
    p("leaf.csr"),
    "-CA",
    p("int.pem"),
    "-CAkey",
    p("int.key"),
    "-set_serial",
    "3",
    "-days",
    "2",
    "-extfile",
    p("leaf.ext"),
    "-out",
    p("leaf.pem"),
  ]);
  return { leaf: readFileSync(p("leaf.pem"), "utf8"), intermediate: readFileSync(p("int.pem"), "utf8"), key: readFileSync(p("leaf.key"), "utf8") };
}

const listenOn = (server: HttpsServer | TcpServer) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));

/** Base64 body of a PEM certificate, for comparison regardless of line layout. */
const body = (pem: string) => pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");

beforeAll(async () => {
  const chain = makeChain();
  leafPem = chain.leaf;
  intermediatePem = chain.intermediate;
  https = createHttpsServer({ key: chain.key, cert: chain.leaf + chain.intermediate }, (_req, res) => res.end("ok"));
  httpsPort = await listenOn(https);
  garbage = createTcpServer((socket) => socket.end("HTTP/1.1 400 Bad Request\r\n\r\nnot tls at all\r\n"));
  garbagePort = await listenOn(garbage);
  const probe = createTcpServer();
  closedPort = await listenOn(probe);
  await new Promise((r) => probe.close(r));
  open = await startTestServer({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } });
  guarded = await startTestServer();
  openUser = await open.createUser();
  guardedUser = await guarded.createUser();
});

afterAll(async () => {
  https?.close();
  garbage?.close();
  await open?.stop();
  await guarded?.stop();
  tmp.cleanup();
});

describe("_fetch", () => {
  test("returns the chain the server presents, leaf first, as PEM", async () => {
    for (const host of ["127.0.0.1", "localhost"]) {
      const res = await openUser.client.post(FETCH, { url: `https://${host}:${httpsPort}/some/path?q=1` });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.json)).toBe(true);
      expect(res.json).toHaveLength(2);
      expect(res.json[0]).toStartWith("-----BEGIN CERTIFICATE-----");
      expect(body(res.json[0])).toBe(body(leafPem));
      expect(body(res.json[1])).toBe(body(intermediatePem));
      expect(opensslOk(["x509", "-noout", "-subject"], res.json[0])).toContain("CN = localhost");
      expect(opensslOk(["x509", "-noout", "-subject"], res.json[1])).toContain("CN = Secbox Test Intermediate");
    }
  });

  test("private targets are refused unless network.allow_private_targets", async () => {
    for (const url of [`https://127.0.0.1:${httpsPort}/`, `https://localhost:${httpsPort}/`, "https://169.254.169.254/", "https://[::1]/"]) {
      const res = await guardedUser.client.post(FETCH, { url });
      expect({ url, status: res.status, code: res.json?.code }).toEqual({ url, status: 400, code: "TARGET_NOT_ALLOWED" });
    }
  });

  test("non-https and malformed URLs → 400 INVALID_INPUT", async () => {
    for (const url of [`http://127.0.0.1:${httpsPort}/`, "ftp://example.com/", "not a url", "https://", ""]) {
      const res = await openUser.client.post(FETCH, { url });
      expect({ url, status: res.status, code: res.json?.code }).toEqual({ url, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toStartWith("url:");
    }
    for (const payload of [{}, { url: 42 }, { url: null }]) {
      const res = await openUser.client.post(FETCH, payload);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
  });

  test("unreachable endpoint or failed handshake → 400 UPSTREAM_FAILED", async () => {
    for (const url of [`https://127.0.0.1:${closedPort}/`, `https://127.0.0.1:${garbagePort}/`]) {
      const res = await openUser.client.post(FETCH, { url });
      expect({ url, status: res.status, code: res.json?.code }).toEqual({ url, status: 400, code: "UPSTREAM_FAILED" });
    }
  });

  test("needs authentication", async () => {
    const res = await open.anon.post(FETCH, { url: `https://127.0.0.1:${httpsPort}/` });
    expect(res.status).toBe(401);
  });
});
