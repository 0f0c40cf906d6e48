// Insertable examples for API tracker scripts (supplement §15.3). Configurators get context.requests and
// context.params.secrets and return {requests}; extractors get context.responses[i] = {status, headers, body bytes}
// and return {body}. Both may use Sandbox.core.decode/encode and Secbox.crypto.sha256.
import type { ScriptExample } from "../../scripts/script-example";

export const CONFIGURATOR_EXAMPLES: ScriptExample[] = [
  {
    label: "Add a header from a secret",
    source: `// Adds "Authorization: Bearer <API_TOKEN>" to every request. Give this tracker access to the secret API_TOKEN below.
const token = context.params.secrets.API_TOKEN;
return {
  requests: context.requests.map((r) => ({ ...r, headers: { ...r.headers, authorization: \`Bearer \${token}\` } })),
};
`,
  },
  {
    label: "Sign a request",
    source: `// Adds x-timestamp and x-signature = sha256(SIGNING_KEY + timestamp + body) to every request.
const key = context.params.secrets.SIGNING_KEY;
const timestamp = String(Math.floor(Date.now() / 1000));
const requests = [];
for (const r of context.requests) {
  const signature = await Secbox.crypto.sha256(key + timestamp + (r.body ?? ""));
  requests.push({ ...r, headers: { ...r.headers, "x-timestamp": timestamp, "x-signature": signature } });
}
return { requests };
`,
  },
  {
    label: "Ask only for what is new",
    source: `// Adds ?since=<last stored value's updatedAt> to the first request once a revision exists.
const since = context.previousContent?.updatedAt;
if (!since) return null; // unchanged
const [first, ...rest] = context.requests;
const url = new URL(first.url);
url.searchParams.set("since", since);
return { requests: [{ ...first, url: url.toString() }, ...rest] };
`,
  },
];

export const EXTRACTOR_EXAMPLES: ScriptExample[] = [
  {
    label: "Pick a JSON field",
    source: `// Keeps only the fields you care about, so other changes in the response make no new revision.
const data = JSON.parse(Sandbox.core.decode(context.responses[0].body));
return { body: { name: data.name, version: data.version } };
`,
  },
  {
    label: "Keep only a version number",
    source: `// The first x.y.z in the response text.
const text = Sandbox.core.decode(context.responses[0].body);
const match = text.match(/\\d+\\.\\d+\\.\\d+/);
return { body: match ? match[0] : "no version found" };
`,
  },
  {
    label: "A number to chart",
    source: `// A numeric value ({value: n}) is also drawn as a chart over the revisions.
const data = JSON.parse(Sandbox.core.decode(context.responses[0].body));
return { body: { value: Number(data.price) } };
`,
  },
  {
    label: "Status and one header",
    source: `// Tracks the HTTP status and a header instead of the body.
const res = context.responses[0];
return { body: { status: res.status, etag: res.headers.etag ?? null } };
`,
  },
];
