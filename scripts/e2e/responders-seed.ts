// Sample responders with captured requests, for screenshots (screenshots.ts) and the 50 requests/s benchmark.
// Hits go to the test server on loopback with the responder's Host, as a client of <handle>.localhost would send.
import type { TestUser } from "../../src/tests/harness";

export async function hit(serverUrl: string, user: TestUser, path: string, init: RequestInit & { prefix?: string } = {}) {
  const host = `${init.prefix ? `${init.prefix}-` : ""}${user.handle}.localhost:7070`;
  const res = await fetch(serverUrl + path, { ...init, headers: { host, ...(init.headers as Record<string, string>) } });
  await res.arrayBuffer();
  return res;
}

export async function seedResponders(serverUrl: string, user: TestUser, tagIds: string[]) {
  const c = user.client;
  const mk = async (body: Record<string, unknown>) => {
    const res = await c.post("/api/webhooks/responders", body);
    if (res.status !== 201) throw new Error(`seed: ${res.status} ${res.text}`);
    return res.json.id as string;
  };
  const orders = await mk({
    name: "orders-mock",
    method: "POST",
    location: { pathType: "*", path: "/orders" },
    tagIds,
    settings: {
      requestsToTrack: 30,
      statusCode: 201,
      headers: [
        ["content-type", "application/json"],
        ["x-request-source", "secbox"],
      ],
      body: '{"ok": true, "note": "line one\\nline two"}',
    },
  });
  const scripted = await mk({
    name: "github-webhook",
    location: { pathType: "=", path: "/github", subdomainPrefix: "gh" },
    settings: {
      requestsToTrack: 10,
      script:
        "// Echo the event name\nconst seen = `${context.method} ${context.path}`;\nreturn { statusCode: 202, headers: { 'content-type': 'application/json' }, body: { event: context.headers['x-github-event'] ?? null, seen }, trackResponse: true };\n",
    },
  });
  const legacy = await mk({
    name: "legacy-callback-with-a-rather-long-name-for-layout",
    method: "GET",
    enabled: false,
    location: { pathType: "=", path: "/callback/v1/legacy" },
    settings: { requestsToTrack: 5 },
  });
  for (let i = 1; i <= 6; i++)
    await hit(serverUrl, user, `/orders/${1000 + i}?debug=${i % 2}&source=shop`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-forwarded-for": `203.0.113.${i}`,
        "x-forwarded-proto": "https",
        "user-agent": "shop-backend/2.1",
      },
      body: JSON.stringify({ order: 1000 + i, items: [{ sku: "A-1", qty: i }], total: 12.5 * i }),
    });
  await hit(serverUrl, user, "/orders/upload", {
    method: "POST",
    headers: { "content-type": "application/octet-stream" },
    body: new Uint8Array([0, 1, 2, 3, 250, 251, 252, 253, 72, 105]),
  });
  await hit(serverUrl, user, "/github", {
    prefix: "gh",
    method: "POST",
    headers: { "content-type": "application/json", "x-github-event": "push" },
    body: '{"ref":"refs/heads/main"}',
  });
  const [latest] = (await c.get(`/api/webhooks/responders/${orders}/_history?limit=2`)).json;
  const second = (await c.get(`/api/webhooks/responders/${orders}/_history?limit=2`)).json[1];
  return { responderIds: { orders, scripted, legacy }, recordId: (second ?? latest).id as string };
}
