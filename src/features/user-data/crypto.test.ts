// The secret encryption of export files (supplement §19.2), against the specification: argon2id as RFC 9106 defines
// it (its test vector), the key parameters of §19.2, AES-256-GCM values another implementation can read and write.
import { describe, expect, test } from "bun:test";
import { argon2Sync, createCipheriv } from "node:crypto";
import { deriveKey, deriveKeySync, KDF_PARAMS, openValue, readSecretsEncryption, sealValue, sealedBytes } from "./crypto";

describe("secrets encryption (§19.2)", () => {
  test("node:crypto's argon2id is RFC 9106's (test vector of §5.3)", () => {
    const tag = argon2Sync("argon2id", {
      message: Buffer.alloc(32, 1),
      nonce: Buffer.alloc(16, 2),
      secret: Buffer.alloc(8, 3),
      associatedData: Buffer.alloc(12, 4),
      parallelism: 4,
      tagLength: 32,
      memory: 32,
      passes: 3,
    });
    expect(tag.toString("hex")).toBe("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
  });

  test("the key: argon2id v0x13 of the UTF-8 passphrase, m = 19456 KiB, t = 2, p = 1, 32 bytes", async () => {
    expect(KDF_PARAMS).toEqual({ m: 19456, t: 2, p: 1 });
    const salt = new Uint8Array(16).fill(7);
    const key = await deriveKey("pässphrase ✓", salt, KDF_PARAMS);
    const expected = argon2Sync("argon2id", {
      message: Buffer.from("pässphrase ✓", "utf8"),
      nonce: salt,
      parallelism: 1,
      tagLength: 32,
      memory: 19456,
      passes: 2,
    });
    expect(Buffer.from(key).equals(expected)).toBe(true);
  });

  test("values: base64(nonce 12 ‖ ciphertext ‖ tag 16), no additional data; written elsewhere, read here and back", async () => {
    const key = await deriveKey("correct horse", new Uint8Array(16), KDF_PARAMS);
    const nonce = Buffer.alloc(12, 9);
    const c = createCipheriv("aes-256-gcm", key, nonce);
    const foreign = Buffer.concat([nonce, c.update("värde", "utf8"), c.final(), c.getAuthTag()]).toString("base64");
    expect(openValue(key, sealedBytes(foreign)!)).toBe("värde");
    const mine = sealValue(key, "värde");
    expect(Buffer.from(mine, "base64").length).toBe(12 + Buffer.byteLength("värde") + 16);
    expect(openValue(key, sealedBytes(mine)!)).toBe("värde");
    expect(sealValue(key, "värde")).not.toBe(mine); // a fresh nonce each time
    const other = await deriveKey("wrong horse", new Uint8Array(16), KDF_PARAMS);
    expect(openValue(other, sealedBytes(mine)!)).toBeUndefined();
    const tampered = Buffer.from(mine, "base64");
    tampered[14]! ^= 1;
    expect(openValue(key, tampered)).toBeUndefined();
    expect(sealedBytes("AAAA")).toBeUndefined();
    expect(sealedBytes("not base64")).toBeUndefined();
  });

  test("a file's secretsEncryption: what is accepted, and bounds against costly parameters", () => {
    const ok = { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { m: 19456, t: 2, p: 1 }, salt: Buffer.alloc(16).toString("base64") };
    expect(readSecretsEncryption(ok)).toEqual({ salt: new Uint8Array(16), params: { m: 19456, t: 2, p: 1 } });
    const bad: [unknown, string][] = [
      [{ ...ok, alg: "aes-128-gcm" }, "alg"],
      [{ ...ok, kdf: "scrypt" }, "kdf"],
      [{ ...ok, kdfParams: { m: 1 << 30, t: 2, p: 1 } }, "kdfParams.m"],
      [{ ...ok, kdfParams: { m: 19456, t: 1000, p: 1 } }, "kdfParams.t"],
      [{ ...ok, kdfParams: { m: 19456, t: 2, p: 0 } }, "kdfParams.p"],
      [{ ...ok, salt: Buffer.alloc(8).toString("base64") }, "salt"],
      ["aes", "secretsEncryption"],
    ];
    for (const [raw, field] of bad) expect(readSecretsEncryption(raw)).toContain(field);
  });

  test("§28: parameters up to twice the documented ones with one lane are accepted, nothing beyond", () => {
    const salt = Buffer.alloc(16).toString("base64");
    const enc = (kdfParams: object) => readSecretsEncryption({ alg: "aes-256-gcm", kdf: "argon2id", kdfParams, salt });
    expect(enc({ m: 38_912, t: 4, p: 1 })).toEqual({ salt: new Uint8Array(16), params: { m: 38_912, t: 4, p: 1 } });
    expect(enc({ m: 19_456, t: 1, p: 1 })).toMatchObject({ params: { m: 19_456, t: 1, p: 1 } });
    for (const [params, field] of [
      [{ m: 38_913, t: 2, p: 1 }, "kdfParams.m"],
      [{ m: 19_456, t: 5, p: 1 }, "kdfParams.t"],
      [{ m: 19_456, t: 2, p: 2 }, "kdfParams.p"],
      [{ m: 262_144, t: 10, p: 16 }, "kdfParams.p"],
      [{ m: 262_144, t: 2, p: 1 }, "kdfParams.m"],
    ] as const)
      expect({ params, problem: enc(params) }).toEqual({ params, problem: expect.stringContaining(field) });
  });

  test("the work thread's synchronous derivation gives the same key", async () => {
    const salt = new Uint8Array(16).fill(3);
    expect(
      Buffer.from(deriveKeySync("correct horse", salt, KDF_PARAMS)).equals(Buffer.from(await deriveKey("correct horse", salt, KDF_PARAMS))),
    ).toBe(true);
  });
});
