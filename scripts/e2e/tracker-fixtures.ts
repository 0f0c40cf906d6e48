// Fixtures of the trackers' browser tests and screenshots: a local HTTP upstream whose content the test changes (an
// API returning JSON, and a web page loading a script and a stylesheet that can be swapped), both on 127.0.0.1, and
// the server options they need (private targets allowed, so trackers may call loopback; nothing leaves it).
export interface TrackerFixtures {
  url: string;
  /** What /api/value answers (JSON text) and its status. */
  api: { body: string; status: number };
  /** The fixture page: its heading, the version of /lib.js it loads (changes the script's bytes), a price. */
  page: { heading: string; libVersion: number; price: string; consoleMessage: string };
  stop(): void;
}

export const TRACKER_SERVER_ENV = { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" };

export function startTrackerFixtures(): TrackerFixtures {
  const api = { body: '{"price": 10, "version": "1.0.0"}', status: 200 };
  const page = { heading: "Catalogue", libVersion: 1, price: "10.00 EUR", consoleMessage: "fixture page loaded" };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/api/value") return new Response(api.body, { status: api.status, headers: { "content-type": "application/json", etag: '"v1"' } });
      if (path === "/api/down") return new Response("upstream down", { status: 503 });
      if (path === "/shop")
        return new Response(
          `<!doctype html><html><head><title>Shop</title><link rel="stylesheet" href="/site.css"><script src="/lib.js"></script></head>` +
            `<body><h1>${page.heading}</h1><p class="price">${page.price}</p><script>console.log(${JSON.stringify(page.consoleMessage)})</script></body></html>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        );
      if (path === "/lib.js") return new Response(`window.lib = ${page.libVersion};`, { headers: { "content-type": "text/javascript" } });
      if (path === "/site.css") return new Response("h1 { color: #123; }", { headers: { "content-type": "text/css" } });
      return new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, api, page, stop: () => server.stop(true) };
}

type Client = { post: (path: string, body?: unknown) => Promise<{ status: number; json: any }> };

/**
 * Trackers with history for screenshots: an API tracker with a numeric extractor run three times with changing
 * prices, one that fails, and a page tracker with the resource inventory whose script (and price text) change between runs.
 */
export async function seedTrackers(
  c: Client,
  f: TrackerFixtures,
  tags: { id: string }[] = [],
): Promise<{ api: string; failing: string; page: string }> {
  const api = (
    await c.post("/api/web_scraping/api_trackers", {
      name: "price-feed",
      target: {
        requests: [{ url: `${f.url}/api/value`, headers: { accept: "application/json" } }],
        extractor: "const data = JSON.parse(Sandbox.core.decode(context.responses[0].body));\nreturn { body: { value: Number(data.price) } };\n",
      },
      config: { revisions: 10, job: { schedule: "0 0 6 * * *", retryStrategy: { type: "constant", interval: 300000, maxAttempts: 3 } } },
      notifications: true,
      tagIds: tags.slice(0, 1).map((t) => t.id),
    })
  ).json;
  for (const price of [10, 12, 11.5]) {
    f.api.body = JSON.stringify({ price, version: "1.0.0" });
    await c.post(`/api/web_scraping/api_trackers/${api.id}/_history`, { refresh: true });
    await Bun.sleep(1100); // distinct revision times (unix seconds)
  }
  const failing = (
    await c.post("/api/web_scraping/api_trackers", {
      name: "status-endpoint",
      target: { url: `${f.url}/api/down` },
      config: { job: { schedule: "0 30 * * * *" } },
    })
  ).json;
  await c.post(`/api/web_scraping/api_trackers/${failing.id}/_history`, { refresh: true });
  await c.post("/api/web_scraping/api_trackers", {
    name: "release-notes",
    target: { url: `${f.url}/api/value` },
    enabled: false,
    tagIds: tags.slice(1, 3).map((t) => t.id),
  });
  const page = (
    await c.post("/api/web_scraping/page_trackers", {
      name: "shop-assets",
      target: { url: `${f.url}/shop`, resources: true, extractor: 'document.querySelector(".price").textContent' },
      config: { job: { schedule: "0 0 6 * * 1" } },
    })
  ).json;
  // The script and the price change: a resource diff and a plain-text value diff.
  for (const [v, price] of [
    [1, "10.00 EUR"],
    [2, "12.50 EUR"],
  ] as const) {
    f.page.libVersion = v;
    f.page.price = price;
    await c.post(`/api/web_scraping/page_trackers/${page.id}/_history`, { refresh: true });
    await Bun.sleep(1100);
  }
  return { api: api.id, failing: failing.id, page: page.id };
}
