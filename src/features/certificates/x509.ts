// @peculiar/x509 needs a Reflect polyfill before it loads (tsyringe), and a WebCrypto provider. Every module of
// this feature imports x509 from here, never from the package directly. The package is imported dynamically:
// in the bundled binary static imports of ESM packages are evaluated before a CommonJS polyfill imported
// next to them, and tsyringe would then fail with "requires a reflect polyfill".
import "reflect-metadata";

const x509 = await import("@peculiar/x509");
x509.cryptoProvider.set(globalThis.crypto);

export { x509 };
