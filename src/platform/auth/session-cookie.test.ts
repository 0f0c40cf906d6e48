// The session cookie against pages of the same site (supplement §28, §28.1), over real HTTP:
// - a request with two session cookies (a planted copy sent first) is signed out and its answer expires every copy
//   the server can reach: the plain name host-only and with Domain= each parent of the UI host, paths / and /api;
// - on https the cookie is `__Host-secbox_session` (Secure, Path=/, no Domain) and the plain name no longer counts;
// - a cookie bomb on the API host is answered by an answer that expires the cookies, not a dead-end 431.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

const EXPIRES = "Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT";

let http: TestServer;
let https: TestServer;
beforeAll(async () => {
  [http, https] = await Promise.all([
    // Three parents a Domain attribute can name: ui.secbox.example.com, secbox.example.com, example.com.
    startTestServer({ env: { SECBOX_SERVER_PUBLIC_URL: "http://ui.secbox.example.com:7070" } }),
    startTestServer({ env: { SECBOX_SERVER_PUBLIC_URL: "https://secbox.example.com" } }),
  ]);
});
afterAll(async () => {
  await Promise.all([http?.stop(), https?.stop()]);
});

const call = (srv: TestServer, path: string, cookie: string, init: RequestInit = {}) =>
  fetch(srv.url + path, { ...init, headers: { cookie, ...(init.headers as Record<string, string>) }, redirect: "manual" });

const secretNames = async (srv: TestServer, user: TestUser) =>
  (await srv.services.secrets.list(user.id, {} as any)).items.map((s: { name: string }) => s.name);

/** The §28.1 expirations of the plain name for the UI host `ui.secbox.example.com` on http. */
const HTTP_EXPIRY = [undefined, "ui.secbox.example.com", "secbox.example.com", "example.com"].flatMap((domain) =>
  ["/", "/api"].map((path) => `secbox_session=; Path=${path}${domain ? `; Domain=${domain}` : ""}; ${EXPIRES}`),
);

describe("two session cookies: signed out, every copy expired (§28.1)", () => {
  test("a planted copy sent first does not make the request the attacker's: 401, nothing saved, every copy expired", async () => {
    const [victim, attacker] = [await http.createUser(), await http.createUser()];
    // What a same-site page plants with `document.cookie = "secbox_session=…; domain=…; path=/api"`: the browser
    // sends the /api copy first.
    const both = `secbox_session=${attacker.session}; secbox_session=${victim.session}`;
    const self = await call(http, "/api/users/self", both);
    expect(self.status).toBe(401);
    expect(((await self.json()) as { code: string }).code).toBe("UNAUTHENTICATED");
    expect(self.headers.getSetCookie()).toEqual(HTTP_EXPIRY);

    const save = await call(http, "/api/user/secrets", both, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "BANK_PIN", value: "1234" }),
    });
    expect(save.status).toBe(401);
    expect(save.headers.getSetCookie()).toEqual(HTTP_EXPIRY);
    expect(await secretNames(http, attacker)).toEqual([]);
    expect(await secretNames(http, victim)).toEqual([]);

    // Either order, either name (prefixed or not) counts.
    for (const cookie of [
      `secbox_session=${victim.session}; secbox_session=${attacker.session}`,
      `__Host-secbox_session=${attacker.session}; secbox_session=${victim.session}`,
      `other=1; secbox_session=${victim.session}; x=2; __Host-secbox_session=${victim.session}`,
    ]) {
      const res = await call(http, "/api/users/self", cookie);
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie()).toEqual(HTTP_EXPIRY);
    }
    // One session cookie is the user, as before, with nothing expired.
    const alone = await call(http, "/api/users/self", `other=1; secbox_session=${victim.session}`);
    expect(alone.status).toBe(200);
    expect(((await alone.json()) as { email: string }).email).toBe(victim.email);
    expect(alone.headers.getSetCookie()).toEqual([]);
  });

  test("public routes and UI pages answer signed out with the expirations; a sign-in keeps its new cookie last", async () => {
    const [victim, attacker] = [await http.createUser(), await http.createUser()];
    const both = `secbox_session=${attacker.session}; secbox_session=${victim.session}`;
    const session = await call(http, "/api/auth/session", both);
    expect(session.status).toBe(200);
    expect(await session.json()).toBeNull();
    expect(session.headers.getSetCookie()).toEqual(HTTP_EXPIRY);

    const page = await call(http, "/secrets", both);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.getSetCookie()).toEqual(HTTP_EXPIRY);

    const signin = await call(http, "/api/auth/signin", both, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: victim.email, password: "correct horse battery" }),
    });
    expect(signin.status).toBe(200);
    const cookies = signin.headers.getSetCookie();
    expect(cookies.slice(0, HTTP_EXPIRY.length)).toEqual(HTTP_EXPIRY);
    expect(cookies.length).toBe(HTTP_EXPIRY.length + 1);
    expect(cookies.at(-1)).toMatch(/^secbox_session=[A-Za-z0-9_-]{20,}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
  });
});

describe("https: the __Host- session cookie (§28.1)", () => {
  const SECURE_EXPIRY = [undefined, "secbox.example.com", "example.com"].flatMap((domain) =>
    ["/", "/api"].map((path) => `secbox_session=; Path=${path}${domain ? `; Domain=${domain}` : ""}; ${EXPIRES}; Secure`),
  );

  test("sign-in sets __Host-secbox_session (Secure, Path=/, no Domain); only that name authenticates", async () => {
    const user = await https.createUser();
    const signin = await fetch(`${https.url}/api/auth/signin`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, password: "correct horse battery" }),
    });
    expect(signin.status).toBe(200);
    const [cookie, ...more] = signin.headers.getSetCookie();
    expect(more).toEqual([]);
    expect(cookie).toMatch(/^__Host-secbox_session=[A-Za-z0-9_-]{20,}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600; Secure$/);
    expect(cookie).not.toMatch(/domain=/i);
    const token = /^__Host-secbox_session=([^;]+)/.exec(cookie!)![1]!;

    expect((await call(https, "/api/users/self", `__Host-secbox_session=${token}`)).status).toBe(200);
    // A plain-named copy (left from before https, or planted) signs nobody in, and the answer expires it, so the
    // next sign-in does not meet it as a second session cookie.
    const plain = await call(https, "/api/users/self", `secbox_session=${token}`);
    expect(plain.status).toBe(401);
    expect(plain.headers.getSetCookie()).toEqual(SECURE_EXPIRY);
    expect(await (await call(https, "/api/auth/session", `secbox_session=${token}`)).json()).toBeNull();

    const signout = await call(https, "/api/auth/signout", `__Host-secbox_session=${token}`, { method: "POST" });
    expect(signout.status).toBe(204);
    expect(signout.headers.getSetCookie()).toEqual(["__Host-secbox_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure"]);
  });

  test("a planted plain copy next to the __Host- cookie: signed out once, the plain copies expired, the __Host- one kept", async () => {
    const [victim, attacker] = [await https.createUser(), await https.createUser()];
    const res = await call(https, "/api/users/self", `secbox_session=${attacker.session}; __Host-secbox_session=${victim.session}`);
    expect(res.status).toBe(401);
    expect(res.headers.getSetCookie()).toEqual(SECURE_EXPIRY);
    // Once the browser dropped the planted copies, the victim's own cookie is the victim again.
    const after = await call(https, "/api/users/self", `__Host-secbox_session=${victim.session}`);
    expect(after.status).toBe(200);
    expect(((await after.json()) as { email: string }).email).toBe(victim.email);
  });
});

describe("https: responders never see nor set the __Host- session cookie", () => {
  test("the path form removes it from what the script and the history see; a responder host cannot set it", async () => {
    const [owner, visitor] = [await https.createUser(), await https.createUser()];
    const mk = async (body: object) => {
      const res = await owner.client.post("/api/webhooks/responders", body);
      expect(res.status).toBe(201);
      return res.json.id as string;
    };
    const trap = await mk({ name: "trap", location: { pathType: "=", path: "/trap" }, settings: { requestsToTrack: 5, body: "hi" } });
    await mk({ name: "echo", location: { pathType: "=", path: "/echo" }, settings: { script: "({ body: context.headers.cookie ?? '(none)' })" } });
    await mk({
      name: "plant",
      location: { pathType: "=", path: "/plant" },
      settings: {
        headers: [
          ["set-cookie", "__Host-secbox_session=x; Path=/; Secure"],
          ["set-cookie", "keep=1"],
        ],
      },
    });
    const cookie = `theme=dark; __Host-secbox_session=${visitor.session}; lang=en`;
    expect(await (await call(https, `/api/webhooks/${owner.handle}/echo`, cookie)).text()).toBe("theme=dark; lang=en");
    expect((await call(https, `/api/webhooks/${owner.handle}/trap`, cookie)).status).toBe(200);
    const history = await owner.client.get(`/api/webhooks/responders/${trap}/_history`);
    expect(history.json.length).toBe(1);
    expect(JSON.stringify(history.json)).not.toContain(visitor.session);
    const planted = await fetch(`${https.url}/plant`, { headers: { host: `${owner.handle}.localhost:7070` } });
    expect(planted.headers.getSetCookie()).toEqual(["keep=1"]);
  });
});

describe("a cookie bomb on the API host (§28): expired by the answer instead of a dead-end 431", () => {
  /** 12 cookies of 4 KB, as a same-site page sets them with `domain=…` (48 KB, over Bun's default 16 KiB limit). */
  const bomb = Array.from({ length: 12 }, (_, i) => `bomb${i}=${"x".repeat(4000)}`).join("; ");
  const expiryFor = (name: string, paths: string[]) =>
    paths.flatMap((path) =>
      [undefined, "ui.secbox.example.com", "secbox.example.com", "example.com"].map(
        (domain) => `${name}=; Path=${path}${domain ? `; Domain=${domain}` : ""}; ${EXPIRES}`,
      ),
    );

  test("API calls get JSON 431 COOKIES_TOO_LARGE that expires each cookie where it can live; the session stays", async () => {
    const victim = await http.createUser();
    const byPath = (paths: string[]) => paths.flatMap((p) => Array.from({ length: 12 }, (_, i) => expiryFor(`bomb${i}`, [p])).flat());
    const res = await call(http, "/api/status", `${bomb}; secbox_session=${victim.session}`);
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({
      message: "This browser sent more cookies for this site than the server accepts; they have been removed. Reload to continue.",
      code: "COOKIES_TOO_LARGE",
    });
    // Every path a cookie sent to /api/status can have, `/` first; never the (single) session cookie.
    expect(res.headers.getSetCookie()).toEqual(byPath(["/", "/api", "/api/", "/api/status"]));
    // Without the bomb the same browser is the same user: the session cookie was not expired.
    expect((await call(http, "/api/users/self", `secbox_session=${victim.session}`)).status).toBe(200);

    // A deeper path has more places to clear than one answer carries (200 lines): it clears path by path, and says so.
    const deep = await call(http, "/api/users/self", bomb);
    expect(deep.status).toBe(431);
    expect(((await deep.json()) as { message: string }).message).toContain("some have been removed. Reload to remove more.");
    expect(deep.headers.getSetCookie()).toEqual(byPath(["/", "/api", "/api/", "/api/users", "/api/users/", "/api/users/self"]).slice(0, 200));
  });

  test("a UI page gets an HTML page that expires them; the largest bomb a browser can hold is answered the same way", async () => {
    const page = await call(http, "/", bomb);
    expect(page.status).toBe(431);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(await page.text()).toContain("Too many cookies");
    expect(page.headers.getSetCookie()).toEqual(Array.from({ length: 12 }, (_, i) => expiryFor(`bomb${i}`, ["/"])).flat());

    // Chromium keeps up to 180 cookies of 4 KB per site: ~720 KB still reaches Secbox (Bun's limit is raised).
    const huge = Array.from({ length: 180 }, (_, i) => `c${i}=${"y".repeat(4000)}`).join("; ");
    const big = await call(http, "/api/users/self", huge);
    expect(big.status).toBe(431);
    expect(((await big.json()) as { code: string }).code).toBe("COOKIES_TOO_LARGE");
    expect(big.headers.getSetCookie().length).toBe(200);
  });

  test("responder hits are not the API host's business: a path-form hit with the bomb is served", async () => {
    const owner = await http.createUser();
    expect(
      (await owner.client.post("/api/webhooks/responders", { name: "r", location: { pathType: "=", path: "/r" }, settings: { body: "served" } }))
        .status,
    ).toBe(201);
    const hit = await call(http, `/api/webhooks/${owner.handle}/r`, bomb);
    expect(hit.status).toBe(200);
    expect(await hit.text()).toBe("served");
  });
});
