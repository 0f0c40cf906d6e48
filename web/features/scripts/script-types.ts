// The script types and limits the library pages show (pure data, no React: components/code-editor's
// examples-compile.test.ts runs every starter). Limits are the API's own rules (api/rules.gen.ts).
import { scripts as scriptRules } from "../../api/rules.gen";
import type { ScriptType } from "../../api/types";

/** Script source limit (supplement §8, §22) and name length: the API's own rules. */
export const MAX_SCRIPT_BYTES = scriptRules.MAX_SCRIPT_BYTES;
export const MAX_SCRIPT_NAME = scriptRules.MAX_SCRIPT_NAME;

export const SCRIPT_TYPES: { value: ScriptType; label: string; hint: string; starter: string }[] = [
  {
    value: "responder",
    label: "Responder",
    hint: "Builds a responder's response from context (method, path, headers, query, body, secrets).",
    starter: `// Runs for each request a responder receives; return {statusCode, headers, body} or null for the defaults.\nconst name = context.query.name ?? "world";\nreturn { statusCode: 200, headers: { "content-type": "application/json" }, body: { hello: name } };\n`,
  },
  {
    value: "api_configurator",
    label: "API tracker configurator",
    hint: "Adjusts an API tracker's requests before they are sent (context.requests, context.params.secrets).",
    starter: `// Return {requests: [...]} to change the requests, or null to send them unchanged.\nconst token = context.params.secrets.API_TOKEN;\nreturn { requests: context.requests.map((r) => ({ ...r, headers: { ...r.headers, authorization: \`Bearer \${token}\` } })) };\n`,
  },
  {
    value: "api_extractor",
    label: "API tracker extractor",
    hint: "Picks the part of the API responses to track (context.responses).",
    starter: `// Return {body} with the value to compare between runs.\nconst data = JSON.parse(Sandbox.core.decode(context.responses[0].body));\nreturn { body: { version: data.version } };\n`,
  },
  {
    value: "page_extractor",
    label: "Page tracker extractor",
    hint: "Runs inside the tracked page and returns the content to compare (the DOM is available).",
    starter: `// Runs inside the loaded page; return a string or JSON value to compare between runs.\nreturn document.querySelector("h1")?.textContent?.trim() ?? "";\n`,
  },
  {
    value: "universal",
    label: "Universal",
    hint: "Shared helper code usable in every kind of script.",
    starter: `// Helper code you copy into responders and trackers.\n`,
  },
];

export const scriptTypeLabel = (t: string) => SCRIPT_TYPES.find((s) => s.value === t)?.label ?? t;
