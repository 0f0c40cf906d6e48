// `secbox token --sub S [--ttl SECONDS]` (supplement §3.4, §23.3): mints an HS256 service-account JWT with
// security.jwt_secret. Needs only the configuration, not the database.
import { signJwt } from "../platform/auth/jwt";
import { configFrom, EXIT_OK, helpRequested, parseFlags, positiveIntFlag, printLine, requireFlag, RuntimeError, type Command } from "./common";

export const DEFAULT_TOKEN_TTL_SEC = 3600;

export const tokenCommand: Command = {
  name: "token",
  summary: "mint a service-account JWT (HS256, security.jwt_secret)",
  usage: "secbox token --sub SUBJECT [--ttl SECONDS]",
  async run(argv) {
    const { values } = parseFlags(argv, { sub: { type: "string" }, ttl: { type: "string" } });
    if (helpRequested(values, this.usage)) return EXIT_OK;
    const sub = requireFlag(values, "sub");
    const ttl = positiveIntFlag(values, "ttl", DEFAULT_TOKEN_TTL_SEC)!;
    const config = configFrom(values);
    if (config.security.jwt_secret === "")
      throw new RuntimeError("security.jwt_secret is empty, so the server rejects every JWT; set it (at least 32 characters) to mint tokens");
    printLine(await signJwt(config.security.jwt_secret, sub, ttl, Math.floor(Date.now() / 1000)));
    return EXIT_OK;
  },
};
