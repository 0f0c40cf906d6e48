// Per-client rate-limit keys (supplement §3.3 client IP, issue 17 item 7): an IPv6 client counts by its /64,
// an IPv4-mapped IPv6 address as the IPv4 address; checked on the sign-in throttle and send_message.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../tests/harness";
import { rateLimitKey } from "./client-ip";

describe("rateLimitKey", () => {
  test("IPv4 as is; IPv4-mapped as the IPv4; IPv6 by /64 whatever the spelling; other text as is", () => {
    expect(rateLimitKey("203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitKey("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(rateLimitKey("[::ffff:203.0.113.7]")).toBe("203.0.113.7");
    const key = "2001:db8:1:2::/64";
    for (const ip of [
      "2001:db8:1:2::1",
      "2001:0db8:0001:0002:ffff:ffff:ffff:ffff",
      "2001:DB8:1:2:a:b:c:d",
      "[2001:db8:1:2::99]",
      "2001:db8:1:2::1%eth0",
    ])
      expect([ip, rateLimitKey(ip)]).toEqual([ip, key]);
    expect(rateLimitKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(rateLimitKey("::1")).toBe("0:0:0:0::/64");
    expect(rateLimitKey(" Unknown ")).toBe("unknown");
  });
});

describe("over HTTP (server.trust_proxy, X-Real-IP)", () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({
      env: { SECBOX_SERVER_TRUST_PROXY: "true", SECBOX_SMTP_HOST: "smtp.invalid", SECBOX_SMTP_CATCH_ALL: "ops@example.com" },
    });
  });
  afterAll(() => srv.stop());

  test("sign-in throttle: failures from rotating addresses of one /64 add up; another /64 is not limited", async () => {
    const user = await srv.createUser("v6@example.com");
    const attempt = (ip: string, password = "wrong password!") =>
      srv.anon.post("/api/auth/signin", { email: user.email, password }, { headers: { "x-real-ip": ip } });
    for (let i = 1; i <= 10; i++) expect((await attempt(`2001:db8:aa:bb:${i.toString(16)}::${i}`)).status).toBe(401);
    const limited = await attempt("2001:db8:aa:bb:ffff:1:2:3", "correct horse battery");
    expect([limited.status, limited.json.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await attempt("2001:db8:aa:bc::1", "correct horse battery")).status).toBe(200);
  });

  test("sign-in throttle: an IPv4-mapped address and its IPv4 form are one client", async () => {
    const user = await srv.createUser("mapped@example.com");
    const attempt = (ip: string, password = "wrong password!") =>
      srv.anon.post("/api/auth/signin", { email: user.email, password }, { headers: { "x-real-ip": ip } });
    for (let i = 0; i < 5; i++) expect((await attempt("198.51.100.20")).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await attempt("::ffff:198.51.100.20")).status).toBe(401);
    expect((await attempt("198.51.100.20", "correct horse battery")).status).toBe(429);
    expect((await attempt("::ffff:198.51.100.21", "correct horse battery")).status).toBe(200);
  });

  test("send_message: 5 per hour per client, an IPv6 /64 counting as one client", async () => {
    const send = (ip: string) => srv.anon.post("/api/send_message", { message: "hello" }, { headers: { "x-real-ip": ip } });
    for (let i = 1; i <= 5; i++) expect((await send(`2001:db8:77:1::${i}`)).status).toBe(204);
    expect((await send("2001:db8:77:1:dead:beef::1")).status).toBe(429);
    expect((await send("2001:db8:77:2::1")).status).toBe(204);
  });
});
