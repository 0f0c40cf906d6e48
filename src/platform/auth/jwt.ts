// Service-account tokens (supplement §3.4): HS256 only, `sub` and `exp` required, 60 s leeway.
import { SignJWT, jwtVerify } from "jose";

const key = (secret: string) => new TextEncoder().encode(secret);

export async function signJwt(secret: string, sub: string, ttlSec: number, nowSec: number): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(sub)
    .setIssuedAt(nowSec)
    .setExpirationTime(nowSec + ttlSec)
    .sign(key(secret));
}

/** The `sub` of a valid token, or undefined for anything else (bad signature, alg, expiry, claims). */
export async function verifyJwt(secret: string, token: string, nowSec: number): Promise<string | undefined> {
  if (secret === "") return undefined;
  try {
    const { payload } = await jwtVerify(token, key(secret), {
      algorithms: ["HS256"],
      clockTolerance: 60,
      requiredClaims: ["sub", "exp"],
      currentDate: new Date(nowSec * 1000),
    });
    // jose checks `iat` only together with maxTokenAge (which would make it mandatory): honour it here.
    if (typeof payload.iat === "number" && payload.iat > nowSec + 60) return undefined;
    return typeof payload.sub === "string" && payload.sub !== "" ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}
