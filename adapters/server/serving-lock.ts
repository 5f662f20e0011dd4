import { statSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { ConflictError, StoreUnavailableError } from "../../src/errors.js";
import { sqliteDriver } from "../sqlite/driver.js";

/** File name of the serving lock inside the data directory. */
export const SERVING_LOCK_FILE = "serve.lock";

/** A held serving lock. */
export interface ServingLock {
  /** Lets the lock go. Safe to call twice. */
  release(): void;
}

// How long a server waits out another's short write to the lock file (the first server
// creating its table, a Redis server recording its target) instead of taking it for a held
// lock. An in-memory server's lock is never short: a Redis server beside one is refused after
// this wait; an in-memory server is refused at once once the table exists.
const PEER_WRITE_WAIT_MS = 2_000;

/**
 * Claims the data directory for a server, or throws `ConflictError` naming who holds it.
 * `redisTarget` is where the server keeps its slots (see {@link redisTargetOf}), or null for
 * the in-memory store: an in-memory server must be alone on its directory, or each would admit
 * every pool's full limit; servers sharing one Redis target share it; a server with another
 * Redis target (another server, database or prefix) would not share their limits, and is
 * refused too.
 *
 * The lock is SQLite's own file lock on `serve.lock` (a separate file: the catalog runs in
 * WAL mode, whose readers and writer never block each other): an exclusive lock in memory, a
 * read lock held open with Redis, the first Redis server recording its target there. The
 * operating system drops the lock when the process ends, `kill -9` included, so a crash
 * never leaves the directory locked.
 *
 * @example
 * ```ts
 * const lock = lockForServing("/var/lib/sluice", redisTargetOf("redis://10.0.0.5:6379", "sluice:"));
 * // ... serve ...
 * lock.release();
 * ```
 */
export function lockForServing(dataDir: string, redisTarget: string | null): ServingLock {
  const file = join(dataDir, SERVING_LOCK_FILE);
  let database: Database.Database;
  try {
    const fresh = (statSync(file, { throwIfNoEntry: false })?.size ?? 0) === 0;
    const waits = fresh || redisTarget !== null;
    database = new (sqliteDriver())(file, { timeout: waits ? PEER_WRITE_WAIT_MS : 0 });
  } catch (error) {
    throw unusable(dataDir, error);
  }
  try {
    // An empty database file takes no read lock: the table gives readers a page to lock.
    database.exec("CREATE TABLE IF NOT EXISTS serving (redis_target TEXT)");
    if (redisTarget === null) {
      database.pragma("busy_timeout = 0");
      // In exclusive locking mode the lock taken by the first write is kept until close.
      database.pragma("locking_mode = EXCLUSIVE");
      database.exec("BEGIN EXCLUSIVE; COMMIT");
    } else {
      joinSharing(database, dataDir, redisTarget);
    }
  } catch (error) {
    database.close();
    if (error instanceof ConflictError) throw error;
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") throw taken(dataDir, redisTarget);
    throw unusable(dataDir, error);
  }
  return {
    release() {
      if (database.open) database.close();
    },
  };
}

/**
 * A Redis server that finds the lock file free (nobody holds any lock on it) records its
 * target; every Redis server then holds a read lock until it stops, and checks, under that
 * lock, that the recorded target is its own. Two servers starting at once with different
 * targets: the second to record, or the one that reads the other's, is refused.
 */
function joinSharing(database: Database.Database, dataDir: string, redisTarget: string): void {
  if (takeAlone(database)) {
    database.exec("DELETE FROM serving");
    database.prepare("INSERT INTO serving (redis_target) VALUES (?)").run(redisTarget);
    database.exec("COMMIT");
  }
  database.exec("BEGIN");
  const recorded = database.prepare("SELECT redis_target FROM serving").pluck().get();
  if (typeof recorded === "string" && recorded !== redisTarget) {
    throw new ConflictError(
      `Sluice servers sharing their slots through ${recorded} already serve the data ` +
        `directory ${dataDir}; this one uses ${redisTarget}, so it would not share their ` +
        "limits. Start it with the same --redis-url and --redis-prefix.",
    );
  }
}

/** Takes the lock file exclusively when nobody else holds it, without waiting. */
function takeAlone(database: Database.Database): boolean {
  const wait = database.pragma("busy_timeout", { simple: true }) as number;
  database.pragma("busy_timeout = 0");
  try {
    database.exec("BEGIN EXCLUSIVE");
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "SQLITE_BUSY") throw error;
    return false;
  } finally {
    database.pragma(`busy_timeout = ${wait}`);
  }
}

/**
 * Where a server keeps its slots, written so that two spellings of one Redis compare equal
 * (`redis://LocalHost`, `redis://127.0.0.1:6379/0`), credentials left out.
 *
 * @example
 * ```ts
 * redisTargetOf("redis://:secret@Cache/0", "sluice:"); // "redis://cache:6379/0 prefix sluice:"
 * ```
 */
export function redisTargetOf(redisUrl: string, prefix: string): string {
  const url = new URL(redisUrl);
  const database = url.pathname.replace(/^\//, "") || "0";
  const port = url.port || "6379";
  const host = url.hostname.toLowerCase();
  const machine = LOOPBACK.has(host) ? "127.0.0.1" : host;
  return `${url.protocol}//${machine}:${port}/${database} prefix ${prefix}`;
}

/** Names of this machine that all reach the same local Redis. */
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** "file is not a database" alone would blame the catalog: name the lock file, and the way out. */
function unusable(dataDir: string, error: unknown): StoreUnavailableError {
  const why = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(
    `Data directory ${dataDir}, ${SERVING_LOCK_FILE}: ${why}. It holds only the serving lock: ` +
      "with no server running, delete it.",
    { cause: error },
  );
}

function taken(dataDir: string, redisTarget: string | null): ConflictError {
  if (redisTarget === null) {
    return new ConflictError(
      `Another Sluice server is already serving the data directory ${dataDir}. A server with ` +
        "the in-memory slot store must be the only one there, or each would admit every " +
        "pool's full limit: stop the other server, or start every server with the same " +
        "--redis-url so they share one limit.",
    );
  }
  return new ConflictError(
    `A Sluice server with the in-memory slot store is already serving the data directory ` +
      `${dataDir}; it would not share its slots with this one. Stop it, or restart it with ` +
      "the same --redis-url as this server.",
  );
}
