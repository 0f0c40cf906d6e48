// The navigation: areas and tools by their plain names, with one line on what each is for (the home page).
export interface NavItem {
  label: string;
  path: string;
  /** One line on what the tool is for (home page). */
  summary: string;
}

export interface NavArea {
  label: string;
  items: NavItem[];
}

export const NAV: NavArea[] = [
  {
    label: "Webhooks",
    items: [
      {
        label: "Responders",
        path: "/responders",
        summary: "Programmable HTTP endpoints on your own subdomain that answer with a static or scripted response and record what they receive.",
      },
    ],
  },
  {
    label: "Certificates",
    items: [
      {
        label: "Certificate templates",
        path: "/certificates/templates",
        summary: "Reusable recipes for self-signed certificates: subject, key algorithm, validity, extensions.",
      },
      {
        label: "Private keys",
        path: "/certificates/private-keys",
        summary: "RSA, ECDSA and Ed25519 keys, optionally passphrase-protected, exportable as PEM, DER or PKCS#8.",
      },
    ],
  },
  {
    label: "Web security",
    items: [{ label: "Content security policies", path: "/csp", summary: "Build, import and evaluate Content-Security-Policy headers." }],
  },
  {
    label: "Web scraping",
    items: [
      {
        label: "Page trackers",
        path: "/trackers/pages",
        summary: "Watch a web page in a real browser on a schedule and get an email when the extracted content changes.",
      },
      {
        label: "API trackers",
        path: "/trackers/apis",
        summary: "Call HTTP APIs on a schedule, extract the part you care about and get notified when it changes.",
      },
    ],
  },
  {
    label: "Workspace",
    items: [
      {
        label: "Secrets",
        path: "/secrets",
        summary: "Encrypted values (tokens, passwords) your scripts can read; a value is never shown again after it is saved.",
      },
      { label: "Scripts", path: "/scripts", summary: "A library of JavaScript snippets to copy into responders and trackers." },
      { label: "Tags", path: "/tags", summary: "Coloured labels to organise and filter everything else." },
    ],
  },
];

export const SETTINGS: NavItem = { label: "Settings", path: "/settings", summary: "Theme, notification email, API keys and password." };

/** The manual of every tool (features/help), served by the server itself. */
export const HELP: NavItem = { label: "Help", path: "/help", summary: "The manual of every tool, served by this server: it needs no network." };
