import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import { InvalidArgumentError } from "../errors.js";

/** scrypt cost parameters; stored with each hash, so old hashes verify after a change. */
export interface PasswordCost {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** N=2^17, r=8, p=1: 128 MiB and a few hundred ms per hash (OWASP's scrypt guidance). */
export const DEFAULT_PASSWORD_COST: PasswordCost = { N: 2 ** 17, r: 8, p: 1 };
/** scrypt needs 128·N·r bytes; Node's default `maxmem` (32 MiB) is below N=2^17. */
const MAX_MEMORY = 256 * 1024 * 1024;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** Shortest password accepted, in characters (code points). */
export const PASSWORD_MIN_LENGTH = 12;
/** Long enough for any passphrase; short enough that hashing it costs nothing extra. */
export const PASSWORD_MAX_LENGTH = 1024;
const STORED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

function derive(password: string, salt: Buffer, cost: PasswordCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: MAX_MEMORY };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * What is wrong with a new password, or null when it may be used.
 *
 * @example
 * ```ts
 * passwordIssue("short"); // "Use at least 12 characters."
 * ```
 */
export function passwordIssue(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

/**
 * Hashes a password with scrypt and a random salt: `scrypt$N$r$p$salt$key` (base64url).
 * Throws InvalidArgumentError (field `password`) when {@link passwordIssue} finds a problem.
 *
 * @example
 * ```ts
 * await store.setPasswordHash(user.id, await hashPassword("correct horse battery"), now);
 * ```
 */
export async function hashPassword(
  password: string,
  cost: PasswordCost = DEFAULT_PASSWORD_COST,
): Promise<string> {
  const issue = passwordIssue(password);
  if (issue !== null) throw new InvalidArgumentError(`password: ${issue}`, [`password: ${issue}`]);
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** A hash of nothing anyone knows: unknown users cost as much to check as known ones. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` matches a stored hash, compared in constant time. With no stored hash
 * (unknown user, or no password set) a decoy hash is checked instead, so the answer takes
 * as long either way and timing does not tell which accounts exist.
 *
 * @example
 * ```ts
 * if (!(await verifyPassword(password, await store.getPasswordHash(user.id)))) fail();
 * ```
 */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
  cost: PasswordCost = DEFAULT_PASSWORD_COST,
): Promise<boolean> {
  const match = STORED.exec(stored ?? "");
  if (!match || password.length > PASSWORD_MAX_LENGTH * 4) {
    decoy ??= hashPassword(randomBytes(24).toString("base64url"), cost);
    await verifyPassword(PASSWORD_MIN_LENGTH_FILLER, await decoy, cost);
    return false;
  }
  const [, n, r, p, salt, key] = match;
  const expected = Buffer.from(key!, "base64url");
  const actual = await derive(password, Buffer.from(salt!, "base64url"), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

const PASSWORD_MIN_LENGTH_FILLER = "x".repeat(PASSWORD_MIN_LENGTH);
