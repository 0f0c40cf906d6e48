// PKCS work on the work pool (issue 29): PBKDF2 encryption and decryption of PKCS#8 keys and PKCS#12 files run on a
// work thread under the caller's share (platform/work), with pkijs on sync-crypto.ts there so their cost stays on
// that thread. `pkcsRunner()` is what keys.ts and templates.ts call: on the pool when the server has one, inline
// otherwise (a direct service construction in a test or script). The worker entry (src/work-tasks.ts) lists
// `certificateTasks()`.
import * as pkijs from "pkijs";
import type { Work } from "../../platform/work/pool";
import { implement, taskRef, type TaskImpl } from "../../platform/work/task";
import { BadPassphraseError, buildPkcs12, decryptPkcs8, encryptPkcs8, kdfCostProblem, KdfCostError, type Pkcs12Input } from "./pkcs";
import { syncCrypto } from "./sync-crypto";

type Decrypted = { pkcs8: Uint8Array } | { wrongPassphrase: true } | { kdfCost: string };

export const pkcsTasks = {
  encrypt: taskRef<{ pkcs8: Uint8Array; passphrase: string }, Uint8Array>("certificates.encryptPkcs8"),
  decrypt: taskRef<{ encrypted: Uint8Array; passphrase: string }, Decrypted>("certificates.decryptPkcs8"),
  pkcs12: taskRef<Pkcs12Input, Uint8Array>("certificates.pkcs12"),
};

async function decrypted(encrypted: Uint8Array, passphrase: string): Promise<Decrypted> {
  try {
    return { pkcs8: await decryptPkcs8(encrypted, passphrase) };
  } catch (err) {
    if (err instanceof BadPassphraseError) return { wrongPassphrase: true };
    if (err instanceof KdfCostError) return { kdfCost: err.message };
    throw err;
  }
}

/** The implementations, for a work thread: pkijs computes with node:crypto on that thread. */
export function certificateTasks(): TaskImpl[] {
  pkijs.setEngine(
    "secbox-sync",
    new pkijs.CryptoEngine({ name: "secbox-sync", crypto: syncCrypto as unknown as Crypto }) as unknown as pkijs.ICryptoEngine,
  );
  return [
    implement(pkcsTasks.encrypt, ({ pkcs8, passphrase }) => encryptPkcs8(pkcs8, passphrase)),
    implement(pkcsTasks.decrypt, ({ encrypted, passphrase }) => decrypted(encrypted, passphrase)),
    implement(pkcsTasks.pkcs12, (input) => buildPkcs12(input)),
  ];
}

/** PKCS operations for one owner's request (the user whose share pays for them). */
export interface PkcsRunner {
  encryptPkcs8(owner: string, pkcs8: Uint8Array, passphrase: string): Promise<Uint8Array>;
  /** BadPassphraseError / KdfCostError as decryptPkcs8. */
  decryptPkcs8(owner: string, encrypted: Uint8Array, passphrase: string): Promise<Uint8Array>;
  buildPkcs12(owner: string, input: Pkcs12Input): Promise<Uint8Array>;
}

export function pkcsRunner(work: Work | undefined): PkcsRunner {
  if (!work)
    return {
      encryptPkcs8: (_owner, pkcs8, passphrase) => encryptPkcs8(pkcs8, passphrase),
      decryptPkcs8: (_owner, encrypted, passphrase) => decryptPkcs8(encrypted, passphrase),
      buildPkcs12: (_owner, input) => buildPkcs12(input),
    };
  return {
    encryptPkcs8: (owner, pkcs8, passphrase) => work.run(owner, pkcsTasks.encrypt, { pkcs8, passphrase }),
    async decryptPkcs8(owner, encrypted, passphrase) {
      // refused before the thread is even asked
      const cost = kdfCostProblem(encrypted);
      if (cost) throw new KdfCostError(cost);
      const r = await work.run(owner, pkcsTasks.decrypt, { encrypted, passphrase });
      if ("pkcs8" in r) return r.pkcs8;
      if ("kdfCost" in r) throw new KdfCostError(r.kdfCost);
      throw new BadPassphraseError("wrong passphrase");
    },
    buildPkcs12: (owner, input) => work.run(owner, pkcsTasks.pkcs12, input),
  };
}
