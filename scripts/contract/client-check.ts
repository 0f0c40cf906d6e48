// The generated client, checked (issue 19): openapi-fetch typed by web/api/schema.gen.ts (openapi-typescript over
// our own document, `bun run gen:api`). `bunx tsc --noEmit` type-checks this file, so a document that stops
// typing these calls fails the type check; the `@ts-expect-error` lines prove that invalid calls do not type-check
// (if one of them type-checked, tsc would report the unused directive). src/tests/client.test.ts also runs
// `clientCheck` against a real server: one resource of every tag created and read, and an error's `code` read.
import createClient from "openapi-fetch";
import type { components, paths } from "../../web/api/schema.gen";

type Client = ReturnType<typeof createClient<paths>>;
export type ApiError = components["schemas"]["Error"];

/** Never run: calls the document must refuse at compile time. */
export function invalidCalls(api: Client) {
  // @ts-expect-error a tag needs a name
  void api.POST("/api/user/tags", { body: {} });
  // @ts-expect-error name is a string, location an object, method one of the listed methods
  void api.POST("/api/webhooks/responders", { body: { name: 1, location: "nope", method: "FETCH" } });
  // @ts-expect-error an unknown method even with a valid location
  void api.POST("/api/webhooks/responders", { body: { name: "x", location: { pathType: "=", path: "/" }, method: "FETCH" } });
  // @ts-expect-error page and pageSize are integers
  void api.GET("/api/user/tags", { params: { query: { page: "0", pageSize: "15" } } });
  // @ts-expect-error order is asc or desc
  void api.GET("/api/user/tags", { params: { query: { order: "sideways" } } });
  // @ts-expect-error a path id is required
  void api.GET("/api/user/tags/{tag_id}", {});
  // @ts-expect-error scriptType is one of the script kinds
  void api.POST("/api/user/scripts", { body: { name: "s", scriptType: "python", content: "1" } });
  // @ts-expect-error a header pair is [name, value] strings
  void api.POST("/api/webhooks/responders", { body: { name: "x", location: { pathType: "=", path: "/" }, settings: { headers: [[1, 2]] } } });
  // @ts-expect-error timestamps are integers, not strings
  void api.POST("/api/user/api_keys", { body: { name: "k", expiresAt: "2030-01-01" } });
}

/** Timestamps are numbers, ids strings: what the generated types promise. */
const seconds = (t: number): number => t;

/** Creates and reads one resource of every tag through the generated client; returns what it saw. */
export async function clientCheck(baseUrl: string, token: string): Promise<Record<string, unknown>> {
  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
  const seen: Record<string, unknown> = {};
  const must = <T>(r: { data?: T; error?: unknown; response: Response }, what: string): T => {
    if (r.data === undefined && r.response.status !== 204) throw new Error(`${what}: HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
    return r.data as T;
  };

  // status, users, settings, notifications destination, scheduler
  const status = must(await api.GET("/api/status"), "status");
  seen.status = status.level satisfies "available" | "unavailable";
  seen.self = must(await api.GET("/api/users/self"), "self").email;
  seen.settings = must(await api.POST("/api/user/settings", { body: { "common.uiTheme": "dark" } }), "settings")["common.uiTheme"];
  seen.destination = must(await api.GET("/api/user/notification_email"), "destination");
  seen.schedule = must(await api.POST("/api/scheduler/parse_schedule", { body: { schedule: "0 0 * * * *" } }), "schedule").minInterval;

  // tags, secrets, scripts
  const tag = must(await api.POST("/api/user/tags", { body: { name: "client-check", color: "primary" } }), "tag");
  seen.tag = must(await api.GET("/api/user/tags/{tag_id}", { params: { path: { tag_id: tag.id } } }), "tag get").color;
  const tags = must(await api.GET("/api/user/tags", { params: { query: { page: 0, pageSize: 100, order: "desc" } } }), "tags");
  seen.tagsTotal = tags.total;
  const secret = must(await api.POST("/api/user/secrets", { body: { name: "CLIENT_CHECK", value: "v", tagIds: [tag.id] } }), "secret");
  seen.secret = must(await api.GET("/api/user/secrets/{secret_id}", { params: { path: { secret_id: secret.id } } }), "secret get").tags[0]?.name;
  const script = must(await api.POST("/api/user/scripts", { body: { name: "client-check", scriptType: "universal", content: "1" } }), "script");
  seen.script = must(await api.GET("/api/user/scripts/{script_id}", { params: { path: { script_id: script.id } } }), "script get").scriptType;

  // webhooks
  const responder = must(
    await api.POST("/api/webhooks/responders", {
      body: {
        name: "client-check",
        location: { pathType: "=", path: "/client-check" },
        method: "GET",
        settings: { headers: [["content-type", "text/plain"]], secrets: "none" },
      },
    }),
    "responder",
  );
  const got = must(await api.GET("/api/webhooks/responders/{responder_id}", { params: { path: { responder_id: responder.id } } }), "responder get");
  seen.responder = [got.method, got.settings.headers?.[0]?.[0], seconds(got.createdAt)];

  // certificates
  const key = must(await api.POST("/api/certificates/private_keys", { body: { keyName: "client-check", alg: { keyType: "ed25519" } } }), "key");
  seen.key = must(await api.GET("/api/certificates/private_keys/{key_id}", { params: { path: { key_id: key.id } } }), "key get").alg.keyType;
  const now = Math.floor(Date.now() / 1000);
  const template = must(
    await api.POST("/api/certificates/templates", {
      body: {
        templateName: "client-check",
        attributes: {
          commonName: "client.example",
          keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
          signatureAlgorithm: "sha256",
          notValidBefore: now,
          notValidAfter: now + 86400,
        },
      },
    }),
    "template",
  );
  seen.template = must(
    await api.GET("/api/certificates/templates/{template_id}", { params: { path: { template_id: template.id } } }),
    "template get",
  ).template.name;

  // web_security
  const policy = must(
    await api.POST("/api/web_security/csp", { body: { name: "client-check", content: { type: "serialized", value: "default-src 'self'" } } }),
    "policy",
  );
  seen.policy = must(await api.GET("/api/web_security/csp/{policy_id}", { params: { path: { policy_id: policy.id } } }), "policy get").policy
    .directives[0]?.name;

  // web_scraping
  const apiTracker = must(
    await api.POST("/api/web_scraping/api_trackers", { body: { name: "client-check", target: { url: "https://example.com/" } } }),
    "api tracker",
  );
  seen.apiTracker = must(
    await api.GET("/api/web_scraping/api_trackers/{tracker_id}", { params: { path: { tracker_id: apiTracker.id } } }),
    "api tracker get",
  ).target.requests[0]?.method;
  const pageTracker = must(
    await api.POST("/api/web_scraping/page_trackers", { body: { name: "client-check", target: { url: "https://example.com/" } } }),
    "page tracker",
  );
  seen.pageTracker = must(
    await api.GET("/api/web_scraping/page_trackers/{tracker_id}", { params: { path: { tracker_id: pageTracker.id } } }),
    "page tracker get",
  ).config.timeout;

  // search, user-data
  seen.search = must(await api.POST("/api/search", { body: { query: "client-check", types: ["tag", "responder"] } }), "search").items.map(
    (i) => i.type,
  );
  seen.preview = must(
    await api.POST("/api/user/data/_import_preview", { body: { data: { format: "secbox-export", version: 1, data: {} } } }),
    "preview",
  ).valid;

  // An error: its code is typed, to switch on.
  const dup = await api.POST("/api/user/tags", { body: { name: "client-check" } });
  if (dup.error) {
    const code: ApiError["code"] = dup.error.code;
    seen.errorCode = code;
    seen.errorStatus = dup.response.status;
  }
  return seen;
}
