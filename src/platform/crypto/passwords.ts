// Passwords: argon2id through Bun.password. A fixed dummy hash keeps sign-in timing the same for unknown users.
let dummyHash: Promise<string> | undefined;

export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword("secbox-timing-equaliser");
    await Bun.password.verify(password, await dummyHash).catch(() => false);
    return false;
  }
  return Bun.password.verify(password, hash).catch(() => false);
}
