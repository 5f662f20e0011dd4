import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { InvalidArgumentError, SluiceError } from "../errors.js";
import type { EncryptedSecret } from "./types.js";

const ALGORITHM = "aes-256-gcm";
const KEY_BYTES = 32;
/** 96-bit IVs are GCM's native size; random per secret keeps reuse odds negligible at catalog scale. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A stored secret could not be decrypted: it was altered, truncated, or sealed under another
 * key (for instance `SLUICE_SECRET_KEY` changed). The message never includes secret material.
 *
 * The code is `store_unavailable` because the server cannot use its own stored data, which is
 * a server-side fault, never the caller's.
 *
 * @example
 * ```ts
 * try { box.open(pool.credential.value); }
 * catch (error) { if (error instanceof SecretUnreadableError) log.error("check SLUICE_SECRET_KEY"); }
 * ```
 */
export class SecretUnreadableError extends SluiceError {
  constructor(options?: { cause?: unknown }) {
    super(
      "store_unavailable",
      "A stored secret could not be decrypted (tampered with, or sealed under a different key).",
      options,
    );
  }
}

/**
 * AES-256-GCM for the secrets the server must read back (upstream credentials, signing
 * secrets). GCM authenticates as well as encrypts, so tampering is detected on open.
 *
 * @example
 * ```ts
 * const box = new SecretBox(loadOrCreateSecretKey({ env: process.env, dataDir }));
 * const sealed = box.seal("sk-live-…");
 * box.open(sealed); // "sk-live-…"
 * ```
 */
export class SecretBox {
  private readonly key: Buffer;

  /** @param key exactly 32 bytes (256 bits). */
  constructor(key: Uint8Array) {
    if (key.byteLength !== KEY_BYTES) {
      throw new InvalidArgumentError(
        `The secret key must be ${KEY_BYTES} bytes; got ${key.byteLength}.`,
      );
    }
    this.key = Buffer.from(key);
  }

  /** Encrypts with a fresh random IV: sealing the same plaintext twice gives different output. */
  seal(plaintext: string): EncryptedSecret {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return {
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
    };
  }

  /** Decrypts and authenticates. Throws {@link SecretUnreadableError} on any mismatch. */
  open(secret: EncryptedSecret): string {
    const iv = Buffer.from(secret.iv, "base64");
    const tag = Buffer.from(secret.tag, "base64");
    // A short tag would weaken authentication, and Node accepts shorter tags unless told.
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretUnreadableError();
    try {
      const decipher = createDecipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      const data = Buffer.from(secret.data, "base64");
      return Buffer.concat([decipher.update(data), decipher.final()]).toString("utf8");
    } catch (error) {
      throw new SecretUnreadableError({ cause: error });
    }
  }
}
