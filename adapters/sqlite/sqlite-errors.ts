import type Database from "better-sqlite3";
import { ConflictError, InvalidArgumentError, StoreUnavailableError } from "../../src/errors.js";
import { sqliteDriver } from "./driver.js";

/**
 * Turns SQLite failures the caller can act on into Sluice's typed errors: a unique index hit
 * (usually another process winning a race the store's own checks could not see) is a
 * ConflictError, a dangling reference an InvalidArgumentError, a lock held past the busy
 * timeout a StoreUnavailableError. Anything else is returned as is, for the caller to rethrow.
 *
 * @example
 * ```ts
 * try { statement.run(params); } catch (error) { throw translateSqliteError(error, "pool"); }
 * ```
 */
export function translateSqliteError(error: unknown, what: string): unknown {
  if (!(error instanceof sqliteDriver().SqliteError)) return error;
  switch (error.code) {
    case "SQLITE_CONSTRAINT_UNIQUE":
    case "SQLITE_CONSTRAINT_PRIMARYKEY":
      return new ConflictError(`${what}: a record with that unique value exists.`);
    case "SQLITE_CONSTRAINT_FOREIGNKEY":
      return new InvalidArgumentError(`${what}: it refers to a record that does not exist.`);
    case "SQLITE_BUSY":
    case "SQLITE_LOCKED":
      return new StoreUnavailableError(
        `${what}: the catalog database is busy (another process holds its write lock); try again in a moment.`,
        { cause: error },
      );
    default:
      return error;
  }
}

/** Runs a write, translating SQLite errors (see {@link translateSqliteError}). */
export function guardedWrite<T>(what: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    throw translateSqliteError(error, what);
  }
}

/**
 * How long a background write (metrics and access-log flushes, pruning) waits for another
 * process's write lock. better-sqlite3 waits synchronously, so the whole event loop (lock and
 * proxy traffic included) stalls for as long as it waits; these writes lose nothing by
 * failing, as their data stays buffered for the next flush.
 */
export const BACKGROUND_BUSY_TIMEOUT_MS = 50;

/**
 * {@link guardedWrite} for background writes: waits at most {@link BACKGROUND_BUSY_TIMEOUT_MS}
 * for the write lock (then fails with a StoreUnavailableError), whatever the connection's own
 * busy timeout is, and restores that afterwards.
 *
 * @example
 * ```ts
 * backgroundWrite(db, "metrics", () => saveAll.immediate(buckets));
 * ```
 */
export function backgroundWrite<T>(db: Database.Database, what: string, write: () => T): T {
  const usual = db.pragma("busy_timeout", { simple: true }) as number;
  db.pragma(`busy_timeout = ${BACKGROUND_BUSY_TIMEOUT_MS}`);
  try {
    return guardedWrite(what, write);
  } finally {
    db.pragma(`busy_timeout = ${usual}`);
  }
}
