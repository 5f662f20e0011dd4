import pg from "pg";
import { StoreUnavailableError } from "../../src/errors.js";
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
      const reason = (error as Error).message;
      // A wrong password or a missing database stays wrong: saying "does not answer" and
      // retrying forever would hide the one thing the operator must fix.
      if (isLastingRefusal(error)) {
        await pool.end().catch(() => {});
        throw new StoreUnavailableError(
          `PostgreSQL at ${describePostgresUrl(url)} refused the connection: ${reason}`,
          { cause: error },
        );
      }
      if (Date.now() + retryDelayMs > deadline) {
        await pool.end().catch(() => {});
        throw new StoreUnavailableError(
          `PostgreSQL at ${describePostgresUrl(url)} does not answer (${reason}); gave up after ${attempt} ${attempt === 1 ? "attempt" : "attempts"}`,
          { cause: error },
        );
      }
      log(
        `PostgreSQL at ${describePostgresUrl(url)} does not answer (${reason}); ` +
          `retrying in ${retryDelayMs} ms (attempt ${attempt})`,
      );
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
    }
  }
}

/**
 * SQLSTATEs of a refusal that waiting does not cure: class 28 (wrong password, unknown role,
 * no `pg_hba.conf` entry), 3D000 (no such database), 42501 (no CONNECT privilege). A server
 * that is starting up (57P03) or full (53300) is worth waiting for.
 */
const LASTING_CODES = /^(28...|3D000|42501)$/;

/**
 * Whether a failed connection attempt would fail the same way on every retry: a refusal by
 * the server (see {@link LASTING_CODES}), a URL the driver cannot use (`Invalid URL`, a
 * malformed percent-encoding, `sslmode` against a server without TLS, a password the
 * authentication method needs but the URL lacks) or a certificate that does not verify.
 */
function isLastingRefusal(error: unknown): boolean {
  if (error instanceof TypeError || error instanceof URIError) return true;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (LASTING_CODES.test(code) || /CERT|ERR_TLS_/.test(code))) {
    return true;
  }
  return (
    typeof message === "string" &&
    /does not support SSL|^SASL: |password must be a string/.test(message)
  );
}

/**
 * The URL without its password, for logs and errors. The query goes too: the driver takes
 * any parameter from it, `?password=…` (and `sslpassword`, `sslkey`) included.
 *
 * @example
 * ```ts
 * describePostgresUrl("postgres://sluice:s3cret@db:5432/sluice"); // "postgres://sluice:***@db:5432/sluice"
 * describePostgresUrl("postgres://sluice@db/sluice?password=s3cret"); // "postgres://sluice@db/sluice?***"
 * ```
 */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    const query = parsed.search ? "?***" : "";
    parsed.search = "";
    return `${parsed.toString()}${query}`;
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
