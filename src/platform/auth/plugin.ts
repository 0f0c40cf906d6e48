// Principal resolution in one place. Every route declares `auth: <level>`; the macro runs after the body
// bytes are read (413 already checked) and before validation, so 401/403 come before body 400s.
import { Elysia, type DocumentDecoration } from "elysia";
import type { Config } from "../../config/schema";
import { sha256Hex } from "../crypto/tokens";
import { decodeBody, decodeMultipart, isMultipart, PendingBody, RawBody } from "../http/body";
import { AUTH_KEY } from "../http/contract";
import { forbidden, unauthenticated } from "../core/errors";
import type { Clock } from "../runtime";
import { sessionCookie, sessionCookieRules, sessionCookiesIn } from "./cookies";
import { verifyJwt } from "./jwt";
import { isOperatorIdentity, isOperatorUser, type AuthUser, type IdentityLookup, type Principal } from "./principal";

/**
 * - `public`: no credentials needed; invalid ones count as none; cross-site cookies are ignored (isCrossSiteWrite).
 * - `user`: a user (session, API key, or JWT whose sub is a user's email).
 * - `userNoApiKey`: as `user`, but API keys → 403 API_KEY_NOT_ALLOWED (API key management).
 * - `operator`: an operator by session or JWT (supplement §3.5).
 * - `shared`: like public, but the resolved principal is kept for own-data access (shared operations).
 */
export type AuthLevel = "public" | "user" | "userNoApiKey" | "operator" | "shared";
export type AuthOption = AuthLevel | { level: AuthLevel; acceptForm?: boolean };

type Credential =
  | { kind: "none" }
  | { kind: "invalid" }
  /** More than one session cookie (§28.1): signed out; the cookie guard expires the copies in the answer. */
  | { kind: "conflict" }
  | { kind: "ok"; principal: Principal; refreshedToken?: string };

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const API_KEY_RE = /^sbx_ak_[0-9a-f]{64}$/;

/**
 * The cross-site guard's test (supplement §1): a POST/PUT/PATCH/DELETE that a browser sent from another site or
 * origin. Foreign when
 * - `Origin` is `null`, unparseable, or names another host:port than `Host`; or
 * - `Sec-Fetch-Site: cross-site`; or
 * - `Sec-Fetch-Site: same-site` (another origin of the same site, e.g. a responder host `<handle>.<domain>`
 *   next to the API) unless `Origin` names this very host:port.
 * Browsers that omit `Origin` on a cross-site write still send `Sec-Fetch-Site`, so either header suffices.
 * Non-browser clients send neither and pass (they hold no ambient cookie to abuse).
 */
export function isCrossSiteWrite(request: Request): boolean {
  if (!UNSAFE.has(request.method)) return false;
  const host = (request.headers.get("host") ?? "").toLowerCase();
  const origin = request.headers.get("origin");
  let sameOrigin = false;
  if (origin !== null) {
    if (origin === "null") return true;
    try {
      if (new URL(origin).host.toLowerCase() !== host) return true;
    } catch {
      return true;
    }
    sameOrigin = true;
  }
  const site = request.headers.get("sec-fetch-site")?.trim().toLowerCase();
  if (site === "cross-site") return true;
  if (site === "same-site" && !sameOrigin) return true;
  return false;
}

export interface AuthDeps {
  config: Config;
  lookup: IdentityLookup;
  clock: Clock;
}

export function createAuthResolver({ config, lookup, clock }: AuthDeps) {
  const operators = config.security.operators;
  const cookies = sessionCookieRules(config);

  async function credential(request: Request): Promise<Credential> {
    const authz = request.headers.get("authorization");
    if (authz !== null) {
      const m = /^Bearer[ ]+(\S+)\s*$/i.exec(authz);
      if (!m) return { kind: "invalid" };
      const token = m[1]!;
      if (API_KEY_RE.test(token)) {
        const found = await lookup.byApiKeyHash(sha256Hex(token));
        if (!found || !found.user.isActivated) return { kind: "invalid" };
        return { kind: "ok", principal: { via: "apiKey", user: found.user, apiKeyId: found.apiKeyId, isOperator: false } };
      }
      const sub = await verifyJwt(config.security.jwt_secret, token, Math.floor(clock.now() / 1000));
      if (sub === undefined) return { kind: "invalid" };
      const user = sub.includes("@") ? await lookup.byEmail(sub.toLowerCase()) : undefined;
      if (user && !user.isActivated) return { kind: "invalid" };
      // The JWT secret is the proof: a listed `sub` is an operator whether or not the user proved the email.
      return { kind: "ok", principal: { via: "jwt", user, sub, isOperator: isOperatorIdentity(operators, undefined, sub) } };
    }
    // Either name counts; two or more sign the request out (a page of the same site may have planted one, with a
    // Domain or a narrower Path that browsers send first). Only the effective name authenticates (§28.1).
    const found = sessionCookiesIn(request.headers.get("cookie"), cookies.names);
    if (found.length > 1) return { kind: "conflict" };
    const [name, cookie] = found[0] ?? [];
    if (name !== cookies.name || cookie === undefined || cookie === "") return { kind: "none" };
    const session = await lookup.bySessionHash(sha256Hex(cookie));
    if (!session || !session.user.isActivated) return { kind: "invalid" };
    return {
      kind: "ok",
      principal: { via: "session", user: session.user, sessionId: session.sessionId, isOperator: isOperatorUser(operators, session.user) },
      refreshedToken: session.refreshed ? cookie : undefined,
    };
  }

  /** Applies the level's rules; returns the principal (undefined on public routes without credentials). */
  async function authorize(request: Request, level: AuthLevel): Promise<{ principal?: Principal; refreshedToken?: string }> {
    const cred = await credential(request);
    const open = level === "public" || level === "shared";
    if (open) {
      if (cred.kind !== "ok") return {};
      if (cred.principal.via === "session" && isCrossSiteWrite(request)) return {};
      return { principal: cred.principal, refreshedToken: cred.refreshedToken };
    }
    if (cred.kind === "none") throw unauthenticated();
    if (cred.kind === "conflict") throw unauthenticated("More than one session cookie was sent: signed out, sign in again");
    if (cred.kind === "invalid") throw unauthenticated("Invalid or expired credentials");
    const p = cred.principal;
    if (level === "operator") {
      if (p.via === "apiKey") throw forbidden("NOT_OPERATOR", "API keys cannot call operator endpoints");
      if (!p.isOperator) throw forbidden("NOT_OPERATOR", "Operator access required");
    } else {
      if (level === "userNoApiKey" && p.via === "apiKey") throw forbidden("API_KEY_NOT_ALLOWED", "API keys cannot manage API keys");
      if (!p.user) throw forbidden("NO_USER", "This service-account token does not belong to a user");
    }
    if (p.via === "session" && isCrossSiteWrite(request)) throw forbidden("FORBIDDEN", "Cross-site request refused");
    return { principal: p, refreshedToken: cred.refreshedToken };
  }

  return { authorize };
}

const principals = new WeakMap<Request, Principal>();

export function authPlugin(deps: AuthDeps) {
  const { authorize } = createAuthResolver(deps);
  const { session_ttl } = deps.config.security;
  const { name: cookieName, secure } = sessionCookieRules(deps.config);
  return new Elysia({ name: "platform/auth" }).macro({
    auth: (option: AuthOption) => {
      const level = typeof option === "string" ? option : option.level;
      const acceptForm = typeof option === "string" ? false : option.acceptForm === true;
      return {
        // The level goes into the route's OpenAPI `detail` (security requirements and 401/403, http/openapi.ts).
        detail: { [AUTH_KEY]: level } as DocumentDecoration,
        // Arrow functions: Elysia's static analysis (Sucrose) reads them reliably in a minified build.
        transform: async (ctx: { request: Request; body: unknown; set: { headers: Record<string, any> } }) => {
          const { principal, refreshedToken } = await authorize(ctx.request, level);
          if (principal) principals.set(ctx.request, principal);
          if (refreshedToken) ctx.set.headers["set-cookie"] = sessionCookie(cookieName, refreshedToken, session_ttl, secure);
          if (ctx.body instanceof PendingBody) ctx.body = await ctx.body.read(); // a route that did not take it as it is
          if (ctx.body instanceof RawBody)
            ctx.body = acceptForm && isMultipart(ctx.body) ? await decodeMultipart(ctx.body) : decodeBody(ctx.body, acceptForm);
        },
        resolve: ({ request }: { request: Request }) => {
          const principal = principals.get(request);
          // `user` is defined on user-level routes (user, userNoApiKey); elsewhere check `principal`.
          return { principal, user: principal?.user as AuthUser };
        },
      };
    },
  });
}

/** The auth plugin as route plugins receive it (its `auth` macro): `app.ts` builds it, features only `.use()` it. */
export type AuthPlugin = ReturnType<typeof authPlugin>;
