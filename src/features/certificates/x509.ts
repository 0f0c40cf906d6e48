// @peculiar/x509 needs a Reflect polyfill before it loads (tsyringe), and a WebCrypto provider. Every module of
// this feature imports x509 from here, never from the package directly, so the order is guaranteed.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(globalThis.crypto);

export { x509 };
