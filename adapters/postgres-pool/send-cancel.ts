import pg from "pg";

/** What node-postgres keeps of a connected client (not all of it in its typings). */
interface ConnectedClient {
  host: string;
  port: number;
  processID: number;
  secretKey: number;
}

/** node-postgres's wire connection, as a cancel request uses it. */
interface WireConnection {
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  once(event: "connect", listener: () => void): void;
  on(event: "error", listener: () => void): void;
}

/**
 * Asks the server to cancel what `target` runs, with a protocol cancel request: a short
 * socket that carries the backend's id and secret, then closes. It is no session (it never
 * logs in), so the role holds no extra connection, and it works while the target's own
 * socket is busy. (node-postgres's `Client#cancel` does the same through a deprecated API.)
 *
 * @example
 * ```ts
 * sendCancel(client); // the running statement then fails with SQLSTATE 57014
 * ```
 */
export function sendCancel(target: pg.PoolClient): void {
  const { host, port, processID, secretKey } = target as unknown as ConnectedClient;
  // No TLS: a cancel request needs none (it carries no credentials).
  const connection = new pg.Client({ host, port }).connection as unknown as WireConnection;
  // An unreachable server: the statement ends anyway by its timeout or a dropped connection.
  connection.on("error", () => {});
  connection.once("connect", () => connection.cancel(processID, secretKey));
  if (host.startsWith("/")) connection.connect(`${host}/.s.PGSQL.${port}`);
  else connection.connect(port, host);
}
