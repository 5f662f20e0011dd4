import type pg from "pg";

/**
 * Keeps a lost connection from crashing the process. node-postgres emits `error` on a client
 * whose server session ends (a restart, `pg_terminate_backend`, a dropped database). The pool
 * listens only while the client is idle; a checked-out client between two queries (inside a
 * transaction, or handing a connection back clean) has no listener, so the error would be thrown
 * from the socket as an uncaught exception. With this, the pool drops an idle client as before,
 * and a checked-out one fails its next query instead, which the caller handles.
 *
 * @example
 * ```ts
 * const pool = survivesLostConnections(new pg.Pool({ connectionString: url }));
 * ```
 */
export function survivesLostConnections(pool: pg.Pool): pg.Pool {
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  return pool;
}
