// The session cookie (supplement §3.2): HttpOnly, SameSite=Lax, Path=/, Secure on https, never a Domain
// attribute so responder hosts never receive it.
export function sessionCookie(name: string, token: string, maxAgeSec: number, secure: boolean): string {
  return `${name}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSec}${secure ? "; Secure" : ""}`;
}

export const clearedSessionCookie = (name: string, secure: boolean) => sessionCookie(name, "", 0, secure);

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
