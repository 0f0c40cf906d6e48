// The domain requirement (supplement §28): responder pages must not be of the UI's site. When the host of
// `server.public_url` and `responders.domain` share a registrable domain (same site), a responder page can set a
// cookie with `Domain=<that domain>` that the UI then receives (a planted session cookie, a cookie bomb); on plain
// http nothing can stop that, so `serve` refuses to start (ConfigError → exit 2); on https the session cookie is
// `__Host-` prefixed, which such a page cannot set, so it only warns. Same site is decided with the public suffix
// list (tldts, private section included; an unknown TLD such as `lan` or `test` counts as a suffix, so
// `secbox.lan` and `secbox-hooks.lan` are two sites). `localhost` (the default of both) stays allowed: browsers
// refuse `Domain=localhost`, and every `<handle>.localhost` is a site of its own.
//
// Run it on the effective configuration (the `public_url` the server will really use), at start only.
import { getDomain } from "tldts";
import { ConfigError } from "./load";
import type { Config } from "./schema";

const registrable = (host: string) => getDomain(host, { allowPrivateDomains: true }) ?? undefined;

/**
 * The registrable domain the UI host shares with responder hosts `<label>.<domain>`, or undefined. Besides equal
 * registrable domains, a UI host under the responder domain (`secbox.lan` with domain `lan`, `ui.localhost` with
 * `localhost`) is one of the responder hosts' sites: a handle could be that very label.
 */
export function sharedSite(uiHost: string, respondersDomain: string): string | undefined {
  const ui = uiHost.toLowerCase().replace(/\.$/, "");
  const domain = respondersDomain.toLowerCase().replace(/\.$/, "");
  const uiSite = registrable(ui);
  if (uiSite === undefined) return undefined;
  if (registrable(domain) === uiSite) return uiSite;
  if (ui.endsWith(`.${domain}`)) {
    const label = ui
      .slice(0, -domain.length - 1)
      .split(".")
      .pop()!;
    if (registrable(`${label}.${domain}`) === uiSite) return uiSite;
  }
  return undefined;
}

/** Throws the ConfigError for same-site on http; returns the warning to log for same-site on https. */
export function checkSite(config: Pick<Config, "server" | "responders">): string | undefined {
  const url = new URL(config.server.public_url);
  const site = sharedSite(url.hostname, config.responders.domain);
  if (site === undefined) return undefined;
  const what =
    `the UI host "${url.hostname}" and responders.domain "${config.responders.domain}" are the same site (${site}): ` +
    `responder pages could set cookies that the UI receives`;
  const fix = `put responders on a sibling domain (e.g. responders.domain = "${suggestion(site)}")`;
  if (url.protocol === "http:") throw new ConfigError("server.public_url", `${what}; ${fix}, or serve the UI over https`);
  return `server.public_url and responders.domain: ${what}; the https-only __Host- session cookie keeps the session safe, but ${fix} to keep responder cookies off the UI`;
}

function suggestion(site: string): string {
  const dot = site.indexOf(".");
  return dot === -1 ? `${site}-hooks` : `${site.slice(0, dot)}-hooks${site.slice(dot)}`;
}
