import pg from "pg";
import { BadGatewayError, DatabaseBusyError } from "../../src/errors.js";
import { SqlStatementError } from "./types.js";

/** SQLSTATE class 57P: the server is shutting down, restarting or starting up. */
const UNAVAILABLE_STATES: ReadonlySet<string> = new Set(["57P01", "57P02", "57P03"]);
/** Errors of the login itself: the read role's name, password or grants. */
const LOGIN_STATES: ReadonlySet<string> = new Set(["28000", "28P01", "3D000", "42501"]);

/**
 * What failed when connecting to a pool's database, as the error the caller gets: 503 when
 * the database is up but takes no more connections now (53300, worth a retry soon), 502
 * otherwise. The message names the SQLSTATE but never the connection string or role; the
 * driver's error is kept as `cause`, for the server's log.
 *
 * @example
 * ```ts
 * const client = await pool.connect().catch((error) => { throw connectError(error); });
 * ```
 */
export function connectError(error: unknown): Error {
  const mapped = connectErrorOf(error);
  // For the server's log (the socket error, e.g. connect ECONNREFUSED 127.0.0.1:5433); the
  // caller's answer carries only the message above.
  mapped.cause = error;
  return mapped;
}

function connectErrorOf(error: unknown): Error {
  if (error instanceof pg.DatabaseError && error.code) {
    if (error.code === "53300") {
      return new DatabaseBusyError(
        "The database has no connection left for this pool's read role (too many connections, SQLSTATE 53300).",
      );
    }
    if (UNAVAILABLE_STATES.has(error.code)) {
      return new DatabaseBusyError(
        `The database is starting up or shutting down (SQLSTATE ${error.code}).`,
      );
    }
    if (LOGIN_STATES.has(error.code)) {
      return new BadGatewayError(
        `The database refused this pool's read role (SQLSTATE ${error.code}): check the pool's connection string and the role's grants.`,
      );
    }
    return new BadGatewayError(
      `The database refused this pool's connection (SQLSTATE ${error.code}).`,
    );
  }
  if (error instanceof Error && /timeout/i.test(error.message)) {
    return new BadGatewayError("The pool's database did not accept a connection in time.");
  }
  return new BadGatewayError("The pool's database could not be reached.");
}

/**
 * An error raised while a statement ran: the database's own error as a
 * {@link SqlStatementError} (answered 400 in the Neon format), a server going away as a 503,
 * anything else (the connection dropped) as a 502.
 *
 * @example
 * ```ts
 * query.on("error", (error) => reject(statementError(error)));
 * ```
 */
export function statementError(error: Error): Error {
  if (!(error instanceof pg.DatabaseError) || !error.code) {
    const lost = new BadGatewayError(
      "The connection to the pool's database was lost while the query ran.",
    );
    lost.cause = error;
    return lost;
  }
  if (UNAVAILABLE_STATES.has(error.code)) {
    return new DatabaseBusyError(
      `The database ended the connection: it is shutting down or restarting (SQLSTATE ${error.code}).`,
    );
  }
  return new SqlStatementError({
    message: error.message,
    code: error.code,
    severity: error.severity,
    detail: error.detail,
    hint: error.hint,
    position: error.position,
    where: error.where,
    schema: error.schema,
    table: error.table,
    column: error.column,
    dataType: error.dataType,
    constraint: error.constraint,
  });
}

/**
 * The error of a statement cancelled by Sluice's own deadline, as PostgreSQL reports its
 * statement timeout (SQLSTATE 57014): the caller sees one answer whichever side stopped it.
 *
 * @example
 * ```ts
 * session.cancel(statementTimeoutError());
 * ```
 */
export function statementTimeoutError(): SqlStatementError {
  return new SqlStatementError({
    message: "canceling statement due to statement timeout",
    code: "57014",
    severity: "ERROR",
    detail: undefined,
    hint: undefined,
    position: undefined,
    where: undefined,
    schema: undefined,
    table: undefined,
    column: undefined,
    dataType: undefined,
    constraint: undefined,
  });
}
