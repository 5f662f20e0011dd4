import pg from "pg";
import { survivesLostConnections } from "../postgres/survive-lost-connections.js";
import { BatchSession } from "./batch-session.js";
import { connectError } from "./database-errors.js";
import type { SqlBatch, SqlResult, SqlRunner, SqlTarget } from "./types.js";

/** Options of {@link PostgresPools}. */
export interface PostgresPoolsOptions {
  /** An idle connection is closed after this long; default 30 s. */
  idleTimeoutMs?: number;
  /** Longest wait for a new connection to log in; default 10 s. */
  connectTimeoutMs?: number;
}

interface Entry {
  pool: pg.Pool;
  connectionString: string;
}

/**
 * One node-postgres connection pool per Sluice pool, holding at most the pool's
 * `maxConcurrent` connections, each logged in as the pool's read role (never a privileged
 * role switching with SET ROLE). `run` checks out a connection, runs the batch in a
 * read-only transaction ({@link BatchSession}) and hands the connection back rolled back.
 * A changed connection string gets a fresh connection pool (the old one closes once its
 * connections are back); a changed limit applies to the next checkout.
 *
 * @example
 * ```ts
 * const pools = new PostgresPools();
 * const [result] = await pools.run(
 *   { poolId: 7, connectionString: readUrl, maxConnections: 4 },
 *   { statements: [{ query: "SELECT $1::int AS n", params: [1] }], statementTimeoutMs: 5000, maxRows: 1000, maxResultBytes: 1 << 20 },
 *   AbortSignal.timeout(10_000),
 * );
 * await pools.close();
 * ```
 */
export class PostgresPools implements SqlRunner {
  private readonly entries = new Map<number, Entry>();
  private readonly idleTimeoutMs: number;
  private readonly connectTimeoutMs: number;

  constructor(options: PostgresPoolsOptions = {}) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  }

  async run(target: SqlTarget, batch: SqlBatch, signal: AbortSignal): Promise<SqlResult[]> {
    signal.throwIfAborted();
    const client = await checkout(this.poolFor(target), signal);
    const session = new BatchSession(client, batch);
    const cancel = () => session.cancel(signal.reason);
    signal.addEventListener("abort", cancel, { once: true });
    try {
      return await session.run();
    } finally {
      signal.removeEventListener("abort", cancel);
      // The caller has its answer without waiting for the rollback: the connection is
      // handed back (or dropped) in the background, and the next checkout waits for it.
      void session.finish();
    }
  }

  async close(): Promise<void> {
    const pools = [...this.entries.values()].map((entry) => entry.pool);
    this.entries.clear();
    await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
  }

  private poolFor(target: SqlTarget): pg.Pool {
    const entry = this.entries.get(target.poolId);
    if (entry && entry.connectionString === target.connectionString) {
      // pg-pool reads `max` at every checkout: a new limit needs no new pool.
      (entry.pool.options as { max: number }).max = target.maxConnections;
      return entry.pool;
    }
    if (entry) void entry.pool.end().catch(() => {});
    // A connection the server closed (a restart, a terminated session): the pool drops an idle
    // one; a checked-out one fails its next query, and the session drops it. Nothing to report.
    const pool = survivesLostConnections(
      new pg.Pool({
        connectionString: target.connectionString,
        max: target.maxConnections,
        idleTimeoutMillis: this.idleTimeoutMs,
        connectionTimeoutMillis: this.connectTimeoutMs,
        application_name: "sluice",
        allowExitOnIdle: true,
      }),
    );
    this.entries.set(target.poolId, { pool, connectionString: target.connectionString });
    return pool;
  }
}

/** A connection from `pool`, or the abort reason; a connection arriving after the abort goes back. */
function checkout(pool: pg.Pool, signal: AbortSignal): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    pool.connect().then(
      (client) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) client.release();
        else resolve(client);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(connectError(error));
      },
    );
  });
}
