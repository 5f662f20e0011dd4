import { describe, expect, it } from "vitest";
import { SecretBox, SecretUnreadableError } from "../../src/catalog/encryption.js";
import {
  API_TOKEN_PREFIX,
  generateApiToken,
  generatePoolKey,
  generateSigningSecret,
  hashSecret,
  hasSecretShape,
  lastFour,
  POOL_KEY_PREFIX,
  secretsEqual,
} from "../../src/catalog/secrets.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { testSecretKey } from "./fixtures.js";

describe("secrets", () => {
  it("generates prefixed 256-bit secrets in base64url", () => {
    expect(generateApiToken()).toMatch(/^slc_tok_[A-Za-z0-9_-]{43}$/);
    expect(generatePoolKey()).toMatch(/^slc_key_[A-Za-z0-9_-]{43}$/);
    expect(generateSigningSecret()).toMatch(/^slc_sig_[A-Za-z0-9_-]{43}$/);
    const many = new Set(Array.from({ length: 200 }, generatePoolKey));
    expect(many.size).toBe(200);
  });

  it("recognises the shape of each kind of secret", () => {
    expect(hasSecretShape(generateApiToken(), API_TOKEN_PREFIX)).toBe(true);
    expect(hasSecretShape(generateApiToken(), POOL_KEY_PREFIX)).toBe(false);
    expect(hasSecretShape(`${generatePoolKey()}x`, POOL_KEY_PREFIX)).toBe(false);
    expect(hasSecretShape(`slc_key_${"!".repeat(43)}`, POOL_KEY_PREFIX)).toBe(false);
  });

  it("hashes with SHA-256 in hex", () => {
    expect(hashSecret("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("compares digests, rejecting malformed ones", () => {
    const digest = hashSecret("a");
    expect(secretsEqual(digest, hashSecret("a"))).toBe(true);
    expect(secretsEqual(digest, hashSecret("b"))).toBe(false);
    expect(secretsEqual(digest, digest.slice(0, 62))).toBe(false);
    expect(secretsEqual("zz".repeat(32), "zz".repeat(32))).toBe(false);
  });

  it("keeps the last four characters", () => {
    expect(lastFour("slc_key_abcdwxyz")).toBe("wxyz");
  });
});

describe("SecretBox", () => {
  it("round-trips text, with a fresh IV each time", () => {
    const box = new SecretBox(testSecretKey());
    const first = box.seal("sk-live-ünïcødé-🔑");
    const second = box.seal("sk-live-ünïcødé-🔑");
    expect(first.iv).not.toBe(second.iv);
    expect(first.data).not.toBe(second.data);
    expect(Buffer.from(first.iv, "base64")).toHaveLength(12);
    expect(box.open(first)).toBe("sk-live-ünïcødé-🔑");
    expect(box.open(second)).toBe("sk-live-ünïcødé-🔑");
  });

  it("detects tampering with data, tag or IV", () => {
    const box = new SecretBox(testSecretKey());
    const sealed = box.seal("credential");
    const flip = (base64: string) => {
      const bytes = Buffer.from(base64, "base64");
      bytes[0] = (bytes[0] ?? 0) ^ 1;
      return bytes.toString("base64");
    };
    expect(() => box.open({ ...sealed, data: flip(sealed.data) })).toThrow(SecretUnreadableError);
    expect(() => box.open({ ...sealed, tag: flip(sealed.tag) })).toThrow(SecretUnreadableError);
    expect(() => box.open({ ...sealed, iv: flip(sealed.iv) })).toThrow(SecretUnreadableError);
    expect(() => box.open({ ...sealed, tag: sealed.tag.slice(0, 8) })).toThrow(
      SecretUnreadableError,
    );
  });

  it("cannot open what another key sealed", () => {
    const sealed = new SecretBox(testSecretKey()).seal("credential");
    expect(() => new SecretBox(testSecretKey()).open(sealed)).toThrow(SecretUnreadableError);
  });

  it("requires a 32-byte key", () => {
    expect(() => new SecretBox(Buffer.alloc(31))).toThrow(InvalidArgumentError);
    expect(() => new SecretBox(Buffer.alloc(33))).toThrow(InvalidArgumentError);
  });
});
