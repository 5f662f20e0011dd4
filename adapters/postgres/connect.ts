import pg from "pg";
import { survivesLostConnections } from "./survive-lost-connections.js";

/** BIGINT (int8) as a JS number: ids and epoch-ms times stay far below 2^53. */
const INT8_OID = 20;
const TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary"
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Options of {@link connectPostgres}. */
export interface ConnectPostgresOptions {
  /** Called with a readable line on each failed attempt (the password is never shown). */
  log?: (line: string) => void;
  /** Give up after this long (ms); default: keep trying. */
  timeoutMs?: number;
  /** Wait between attempts (ms); default 1 000. */
  retryDelayMs?: number;
  /** Connections in the pool; default 10. */
  max?: number;
}

/**
 * A connection pool for `url`, once the server answers: while PostgreSQL is down (a fleet
 * often starts before its database) it waits and retries, logging each attempt.
 *
 * @example
 * ```ts
 * const pool = await connectPostgres("postgres://sluice@db/sluice", { log: console.log });
 * ```
 */
export async function connectPostgres(
  url: string,
  options: ConnectPostgresOptions = {},
): Promise<pg.Pool> {
  const log = options.log ?? (() => {});
  const retryDelayMs = options.retryDelayMs ?? 1_000;
  const deadline = Date.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
  // A client losing its connection must not crash the process; the next query retries.
  const pool = survivesLostConnections(
    new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: 5_000,
      types: TYPES,
    }),
  );
  for (let attempt = 1; ; attempt++) {
    try {
      const client = await pool.connect();
      client.release();
      return pool;
    } catch (error) {
      if (Date.now() + retryDelayMs > deadline) {
        await pool.end().catch(() => {});
        throw error;
      }
      log(
        `PostgreSQL at ${describePostgresUrl(url)} does not answer (${(error as Error).message}); ` +
          `retrying in ${retryDelayMs} ms (attempt ${attempt})`,
      );
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
    }
  }
}

/**
 * The URL without its password, for logs.
 *
 * @example
 * ```ts
 * describePostgresUrl("postgres://sluice:s3cret@db:5432/sluice"); // "postgres://sluice:***@db:5432/sluice"
 * ```
 */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable PostgreSQL URL)";
  }
}

/** The client type a unit runs on, or the pool itself: both answer `query`. */
export type Queryable = Pick<pg.Pool, "query">;

export { TYPES as POSTGRES_TYPES };

/**
 * Runs `body` in BEGIN … COMMIT on one connection of `pool` (ROLLBACK when it throws).
 *
 * @example
 * ```ts
 * const moved = await withTransaction(pool, async (client) => (await client.query(sql)).rowCount);
 * ```
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<T>,
  isolation: "read committed" | "repeatable read" = "read committed",
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(
      isolation === "read committed" ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ",
    );
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
