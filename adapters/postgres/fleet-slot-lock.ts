import pg from "pg";
import { ConflictError } from "../../src/errors.js";

/** Advisory lock keys (class, key) of the serving lock; any fixed numbers. */
const LOCK_CLASS = 0x51_1c_e0;
/**
 * Held shared by every Redis server of the fleet for as long as it serves, or exclusively by
 * the one server that keeps its slots in memory.
 */
const SERVING = 1;
/** Held for a moment by a starting server, so two starting at once check one after the other. */
const STARTING = 2;
/** The target an in-memory server records: its slots are its own. */
const IN_MEMORY = "memory";
/** Wait before taking a lost lock again. */
const RETAKE_DELAY_MS = 1_000;

/** A held fleet serving lock. */
export interface FleetServingLock {
  /** Lets the lock go (ends its session). Safe to call twice. */
  release(): void;
}

/** Options of {@link lockPostgresFleet}. */
export interface LockPostgresFleetOptions {
  /** Told when the lock's connection is lost and taken again. */
  log?: (line: string) => void;
}

/**
 * Joins the servers that share their slots through `redisTarget` (`redisTargetOf`) on the
 * PostgreSQL catalog at `url`, or throws `ConflictError` when servers with another Redis
 * target serve it already: they would not share limits, and each group would admit every
 * pool's full limit (as the data directory's serving lock refuses for SQLite). `null`: the
 * server keeps its slots in memory, so it must be the catalog's only server.
 *
 * Every Redis server holds a shared advisory lock on a connection of its own until it stops
 * (an in-memory server holds it exclusively); the first one (none held) records its target in
 * `fleet_slot_store`, the others compare. PostgreSQL drops the lock when the session ends,
 * `kill -9` of the server included. A lost connection is taken again, without checking (the
 * server already serves).
 *
 * @example
 * ```ts
 * const lock = await lockPostgresFleet(url, "redis://10.0.0.5:6379/0 prefix sluice:");
 * // ... serve ...
 * lock.release();
 * ```
 */
export async function lockPostgresFleet(
  url: string,
  redisTarget: string | null,
  options: LockPostgresFleetOptions = {},
): Promise<FleetServingLock> {
  const log = options.log ?? (() => {});
  const target = redisTarget ?? IN_MEMORY;
  let released = false;
  let client = await openSession(url);
  try {
    await client.query("SELECT pg_advisory_lock($1, $2)", [LOCK_CLASS, STARTING]);
    const { rows } = await client.query<{ alone: boolean }>(
      "SELECT pg_try_advisory_lock($1, $2) AS alone",
      [LOCK_CLASS, SERVING],
    );
    if (rows[0]?.alone) {
      await client.query(
        "INSERT INTO fleet_slot_store (id, target) VALUES (1, $1) " +
          "ON CONFLICT (id) DO UPDATE SET target = excluded.target, updated_at = now()",
        [target],
      );
      // An in-memory server keeps the lock exclusive: no other server may join it.
      if (redisTarget !== null) {
        await client.query("SELECT pg_advisory_unlock($1, $2)", [LOCK_CLASS, SERVING]);
      }
    } else {
      const recorded = await client.query<{ target: string }>(
        "SELECT target FROM fleet_slot_store WHERE id = 1",
      );
      refuseJoining(recorded.rows[0]?.target, redisTarget);
    }
    if (redisTarget !== null) {
      await client.query("SELECT pg_advisory_lock_shared($1, $2)", [LOCK_CLASS, SERVING]);
    }
    await client.query("SELECT pg_advisory_unlock($1, $2)", [LOCK_CLASS, STARTING]);
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }

  const retake = (reason: string) => {
    if (released) return;
    log(`The fleet's serving lock on PostgreSQL was lost (${reason}); taking it again`);
    setTimeout(async () => {
      if (released) return;
      try {
        const next = await openSession(url);
        const take = redisTarget === null ? "pg_advisory_lock" : "pg_advisory_lock_shared";
        await next.query(`SELECT ${take}($1, $2)`, [LOCK_CLASS, SERVING]);
        if (released) {
          await next.end().catch(() => {});
          return;
        }
        client = next;
        watch(next);
      } catch (error) {
        retake((error as Error).message);
      }
    }, RETAKE_DELAY_MS).unref();
  };
  const watch = (session: pg.Client) => {
    let lost = false;
    const lose = (reason: string) => {
      if (lost) return;
      lost = true;
      session.end().catch(() => {});
      retake(reason);
    };
    session.on("error", (error) => lose(error.message));
    session.on("end", () => lose("connection closed"));
  };
  watch(client);
  return {
    release() {
      if (released) return;
      released = true;
      client.end().catch(() => {});
    },
  };
}

/**
 * Why a server with `redisTarget` (null: in memory) may not join servers that recorded
 * `theirs`, or nothing when it may: only Redis servers with one target share the limits.
 */
function refuseJoining(theirs: string | undefined, redisTarget: string | null): void {
  if (redisTarget === null) {
    const serving =
      theirs === undefined || theirs === IN_MEMORY
        ? "A Sluice server already serves"
        : `Sluice servers sharing their slots through ${theirs} already serve`;
    throw new ConflictError(
      `${serving} this PostgreSQL catalog; this one keeps its slots in memory, so it would ` +
        "admit every pool's full limit on top of theirs. Give every server the same " +
        "--redis-url (or --redis-cluster-nodes), or stop the other one.",
    );
  }
  if (theirs === IN_MEMORY) {
    throw new ConflictError(
      "A Sluice server that keeps its slots in memory already serves this PostgreSQL catalog, " +
        "so no other server can share its limits. Restart it with --redis-url (or " +
        "--redis-cluster-nodes) to run several servers.",
    );
  }
  if (theirs !== undefined && theirs !== redisTarget) {
    throw new ConflictError(
      `Sluice servers sharing their slots through ${theirs} already serve this PostgreSQL ` +
        `catalog; this one uses ${redisTarget}, so it would not share their limits (each ` +
        "would admit every pool's full limit). Start it with the same --redis-url and " +
        "--redis-prefix (or --redis-cluster-nodes).",
    );
  }
}

/** A connection of its own: an advisory lock lives as long as the session that took it. */
async function openSession(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  // Until `watch` takes over: a failure while connecting is the caller's to report.
  client.on("error", () => {});
  await client.connect();
  return client;
}
