// The navigation: areas and tools by their plain names. Tool pages that later issues build are listed with
// `ready: false` and show what the tool does and where its API is until then.
export interface NavItem {
  label: string;
  path: string;
  /** One line on what the tool is for (home page, placeholder pages). */
  summary: string;
  /** The API path the tool's page builds on. */
  api: string;
  ready: boolean;
}

export interface NavArea {
  label: string;
  items: NavItem[];
}

export const NAV: NavArea[] = [
  {
    label: "Webhooks",
    items: [{ label: "Responders", path: "/responders", summary: "Programmable HTTP endpoints on your own subdomain that answer with a static or scripted response and record what they receive.", api: "/api/webhooks/responders", ready: true }],
  },
  {
    label: "Certificates",
    items: [
      { label: "Certificate templates", path: "/certificates/templates", summary: "Reusable recipes for self-signed certificates: subject, key algorithm, validity, extensions.", api: "/api/certificates/templates", ready: true },
      { label: "Private keys", path: "/certificates/private-keys", summary: "RSA, ECDSA and Ed25519 keys, optionally passphrase-protected, exportable as PEM, DER or PKCS#8.", api: "/api/certificates/private_keys", ready: true },
    ],
  },
  {
    label: "Web security",
    items: [{ label: "Content security policies", path: "/csp", summary: "Build, import and evaluate Content-Security-Policy headers.", api: "/api/web_security/csp", ready: true }],
  },
  {
    label: "Web scraping",
    items: [
      { label: "Page trackers", path: "/trackers/pages", summary: "Watch a web page in a real browser on a schedule and get an email when the extracted content changes.", api: "/api/web_scraping/page_trackers", ready: true },
      { label: "API trackers", path: "/trackers/apis", summary: "Call HTTP APIs on a schedule, extract the part you care about and get notified when it changes.", api: "/api/web_scraping/api_trackers", ready: true },
    ],
  },
  {
    label: "Workspace",
    items: [
      { label: "Secrets", path: "/secrets", summary: "Encrypted values (tokens, passwords) your scripts can read; a value is never shown again after it is saved.", api: "/api/user/secrets", ready: true },
      { label: "Scripts", path: "/scripts", summary: "A library of JavaScript snippets to copy into responders and trackers.", api: "/api/user/scripts", ready: true },
      { label: "Tags", path: "/tags", summary: "Coloured labels to organise and filter everything else.", api: "/api/user/tags", ready: true },
    ],
  },
];

export const SETTINGS: NavItem = { label: "Settings", path: "/settings", summary: "Theme, notification email, API keys and password.", api: "/api/user/settings", ready: true };

/** The manual of every tool (features/help), served by the server itself. */
export const HELP: NavItem = { label: "Help", path: "/help", summary: "The manual of every tool, served by this server: it needs no network.", api: "", ready: true };

export const ALL_NAV_ITEMS: NavItem[] = [...NAV.flatMap((a) => a.items), SETTINGS];
