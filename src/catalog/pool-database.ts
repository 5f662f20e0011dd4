import type { SecretBox } from "./encryption.js";
import type { PoolDatabaseRecord, PoolRecord } from "./types.js";
import { fieldIssue, throwIfIssues } from "./validation.js";

/** Limits of a database pool when its definition names none. */
export const POOL_DATABASE_DEFAULTS = {
  maxRows: 10_000,
  maxResultBytes: 10 * 1024 * 1024,
  statementTimeoutMs: 30_000,
} as const;

/** The limits of a database pool, as given (the connection string apart). */
export type PoolDatabaseLimits = Omit<PoolDatabaseRecord, "connectionString">;

const SCHEMES = new Set(["postgres:", "postgresql:"]);

/**
 * Why `value` is not a usable read-role connection string, or null when it is: a
 * `postgres://` or `postgresql://` URL with a user, a host and a database.
 *
 * @example
 * ```ts
 * connectionStringIssue("postgres://reader:pw@db.internal:5432/app"); // null
 * connectionStringIssue("mysql://x@y/z"); // "Must be a postgres:// or postgresql:// URL."
 * ```
 */
export function connectionStringIssue(value: string): string | null {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || !SCHEMES.has(url.protocol)) return "Must be a postgres:// or postgresql:// URL.";
  if (url.username === "" || url.hostname === "" || url.pathname.length < 2) {
    // Never echo the value: it holds the password.
    return "Must name the read role (user), the host and the database: postgres://user:password@host:5432/database.";
  }
  return null;
}

/**
 * Where a database pool connects, without its user or password: shown as the pool's origin
 * (the apply plan, `sluice status`), where a secret must never appear.
 *
 * @example
 * ```ts
 * databaseOrigin("postgres://reader:pw@db.internal:5432/app?sslmode=require"); // "postgresql://db.internal:5432/app"
 * ```
 */
export function databaseOrigin(connectionString: string): string {
  const url = new URL(connectionString);
  return `postgresql://${url.host}${url.pathname}`;
}

/**
 * Encrypts a database pool's read-role connection string for storage, with its limits.
 * Throws InvalidArgumentError for a connection string {@link connectionStringIssue} refuses
 * (the message never repeats the value).
 *
 * @example
 * ```ts
 * const database = sealDatabase(box, process.env.READ_URL, POOL_DATABASE_DEFAULTS);
 * await store.upsertPool(teamId, { ...input, backend: "postgres", database });
 * ```
 */
export function sealDatabase(
  box: SecretBox,
  connectionString: string,
  limits: PoolDatabaseLimits,
): PoolDatabaseRecord {
  const issue = connectionStringIssue(connectionString);
  throwIfIssues("database", issue ? [fieldIssue("database.connectionString", issue)] : []);
  return { ...limits, connectionString: box.seal(connectionString) };
}

/**
 * The pool's read-role connection string in clear, or null for a pool without one. Throws
 * SecretUnreadableError when the stored value cannot be decrypted.
 *
 * @example
 * ```ts
 * const url = decryptDatabaseUrl(box, pool);
 * if (url) pgPool = new pg.Pool({ connectionString: url, max: pool.maxConcurrent });
 * ```
 */
export function decryptDatabaseUrl(box: SecretBox, pool: PoolRecord): string | null {
  return pool.database ? box.open(pool.database.connectionString) : null;
}
