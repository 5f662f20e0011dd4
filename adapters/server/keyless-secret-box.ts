import { randomBytes } from "node:crypto";
import { SecretBox } from "../../src/catalog/encryption.js";
import type { EncryptedSecret } from "../../src/catalog/types.js";
import { InvalidArgumentError } from "../../src/errors.js";

/**
 * The secret box of a command opened without the catalog's key (a PostgreSQL catalog without
 * `SLUICE_SECRET_KEY`, for a command that seals and opens nothing): sealing or opening fails
 * with a message naming the variable, never with a stand-in key's garbage stored for good.
 *
 * @example
 * ```ts
 * new CatalogService({ store, secretBox: new KeylessSecretBox("SLUICE_SECRET_KEY"), clock });
 * ```
 */
export class KeylessSecretBox extends SecretBox {
  constructor(private readonly keySource: string) {
    // The parent needs a key; this one is never used.
    super(randomBytes(32));
  }

  override seal(_plaintext: string): EncryptedSecret {
    throw this.missing();
  }

  override open(_secret: EncryptedSecret): string {
    throw this.missing();
  }

  private missing(): InvalidArgumentError {
    return new InvalidArgumentError(
      `This needs ${this.keySource}, the key that seals upstream credentials and signing secrets ` +
        "(the same as the servers').",
    );
  }
}
