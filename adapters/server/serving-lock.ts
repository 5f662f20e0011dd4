import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ConflictError, StoreUnavailableError } from "../../src/errors.js";

/** File name of the serving lock inside the data directory. */
export const SERVING_LOCK_FILE = "serve.lock";

/**
 * How a server shares its data directory: `sole` (in-memory slots: it must be the only
 * server there, or each would admit every pool's full limit) or `shared` (Redis slots: any
 * number of servers share one limit, but no `sole` one beside them).
 */
export type ServingMode = "sole" | "shared";

/** A held serving lock. */
export interface ServingLock {
  /** Lets the lock go. Safe to call twice. */
  release(): void;
}

// The first server on a directory creates the lock file's table; one starting at the same
// moment waits this long for that write instead of being refused. Once the table exists,
// nobody waits: a held lock is refused at once.
const CREATE_WAIT_MS = 2_000;

/**
 * Claims the data directory for a server, or throws `ConflictError` naming who holds it.
 *
 * The lock is SQLite's own file lock on `serve.lock` (a separate file: the catalog runs in
 * WAL mode, whose readers and writer never block each other): an exclusive lock for `sole`,
 * a read lock held open for `shared`. The operating system drops it when the process ends,
 * `kill -9` included, so a crash never leaves the directory locked.
 *
 * @example
 * ```ts
 * const lock = lockForServing("/var/lib/sluice", config.redisUrl ? "shared" : "sole");
 * // ... serve ...
 * lock.release();
 * ```
 */
export function lockForServing(dataDir: string, mode: ServingMode): ServingLock {
  const file = join(dataDir, SERVING_LOCK_FILE);
  let database: Database.Database;
  try {
    const fresh = (statSync(file, { throwIfNoEntry: false })?.size ?? 0) === 0;
    database = new Database(file, { timeout: fresh ? CREATE_WAIT_MS : 0 });
  } catch (error) {
    throw unusable(dataDir, error);
  }
  try {
    // An empty database file takes no read lock: the table gives readers a page to lock.
    database.exec("CREATE TABLE IF NOT EXISTS serving (mode TEXT)");
    database.pragma("busy_timeout = 0");
    if (mode === "sole") {
      // In exclusive locking mode the lock taken by the first write is kept until close.
      database.pragma("locking_mode = EXCLUSIVE");
      database.exec("BEGIN EXCLUSIVE; COMMIT");
    } else {
      database.exec("BEGIN");
      database.prepare("SELECT count(*) FROM serving").get();
    }
  } catch (error) {
    database.close();
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") throw taken(dataDir, mode);
    throw unusable(dataDir, error);
  }
  return {
    release() {
      if (database.open) database.close();
    },
  };
}

/** "file is not a database" alone would blame the catalog: name the lock file, and the way out. */
function unusable(dataDir: string, error: unknown): StoreUnavailableError {
  const why = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(
    `Data directory ${dataDir}, ${SERVING_LOCK_FILE}: ${why}. It holds only the serving lock: ` +
      "with no server running, delete it.",
    { cause: error },
  );
}

function taken(dataDir: string, mode: ServingMode): ConflictError {
  if (mode === "sole") {
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
