import type { EncryptedSecret } from "../../src/catalog/types.js";
import type { Queryable } from "./connect.js";

/** What the check seals: any fixed text; only whether it opens matters. */
const CHECK_TEXT = "sluice secret key check";

/** Seals and opens with one key (a `SecretBox`). */
export interface SecretSealer {
  seal(plaintext: string): EncryptedSecret;
  open(secret: EncryptedSecret): string;
}

/**
 * Whether `box` holds the key of this database's fleet. The first process that opens the
 * database with a key stores a fixed text sealed with it (`secret_key_check`); every later
 * one must open it. Servers and commands of one fleet with different `SLUICE_SECRET_KEY`s
 * would otherwise run side by side until one seals a credential, a database URL or a
 * signing secret that the others cannot open (their calls to that pool then fail).
 * Returns false for a key that cannot open the stored check. With `record: false` (a command
 * that only reads) nothing is written: no stored check yet passes.
 *
 * @example
 * ```ts
 * if (!(await holdsFleetSecretKey(pool, new SecretBox(key)))) throw new Error("wrong key");
 * ```
 */
export async function holdsFleetSecretKey(
  db: Queryable,
  box: SecretSealer,
  options: { record?: boolean } = {},
): Promise<boolean> {
  if (options.record !== false) {
    // First writer wins; everyone else (also one starting at the same moment) reads its row.
    await db.query(
      "INSERT INTO secret_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
      [JSON.stringify(box.seal(CHECK_TEXT))],
    );
  }
  const { rows } = await db.query<{ sealed: string }>(
    "SELECT sealed FROM secret_key_check WHERE id = 1",
  );
  if (rows[0] === undefined) return true;
  try {
    return box.open(JSON.parse(rows[0].sealed) as EncryptedSecret) === CHECK_TEXT;
  } catch {
    return false;
  }
}
