// Insertable examples for page tracker extractors (supplement §16.2): they run inside the loaded page (the DOM is
// there; the page's own globals are not) with context = {previousContent?, params: {secrets}}, and return a string
// or any JSON value.
import type { ScriptExample } from "../../scripts/script-example";

export const PAGE_EXTRACTOR_EXAMPLES: ScriptExample[] = [
  {
    label: "Text of a selector",
    source: `// The text of the first element matching the selector ("" when there is none).
document.querySelector("h1")?.textContent.trim() ?? ""
`,
  },
  {
    label: "A table as JSON",
    source: `// The first table as a list of rows keyed by its header cells.
const rows = [...document.querySelectorAll("table tr")].map((tr) => [...tr.querySelectorAll("th, td")].map((c) => c.textContent.trim()));
const [head = [], ...body] = rows;
return body.map((cells) => Object.fromEntries(cells.map((text, i) => [head[i] || String(i), text])));
`,
  },
  {
    label: "A price",
    source: `// A number ({value: n}) is also drawn as a chart over the revisions.
const text = document.querySelector(".price")?.textContent ?? "";
return { value: Number(text.replace(/[^0-9.,-]/g, "").replace(",", ".")) };
`,
  },
  {
    label: "Links on the page",
    source: `// Every link target, sorted, so a new or removed link is a change.
return [...new Set([...document.querySelectorAll("a[href]")].map((a) => a.href))].sort();
`,
  },
];
