/** A statement parameter as JSON carries it: pg sends numbers and booleans as text, arrays as array literals. */
export type SqlParam = string | number | boolean | null | SqlParam[];

/** One statement of a request: a single SQL statement and its `$n` parameters. */
export interface SqlStatement {
  query: string;
  params: SqlParam[];
}

/** Isolation levels a batch may ask for (the transaction is read-only whatever it asks). */
export type SqlIsolation = "read committed" | "repeatable read" | "serializable";

/** What one request runs: its statements, in one read-only transaction, and its limits. */
export interface SqlBatch {
  statements: SqlStatement[];
  /** Longest any statement may run (`SET LOCAL statement_timeout`). */
  statementTimeoutMs: number;
  /** Most rows all statements together may return. */
  maxRows: number;
  /**
   * Most bytes all statements' results together may take as the caller receives them:
   * each row as {@link rowBytes} counts it, plus each statement's fields.
   */
  maxResultBytes: number;
  /**
   * The bytes one row takes in the answer (its serialized JSON, keys and separators
   * included). Default: its values as JSON strings, in an array.
   */
  rowBytes?: ((row: readonly (string | null)[], fields: readonly SqlField[]) => number) | undefined;
  /** Default: the database's own (read committed unless configured). */
  isolation?: SqlIsolation | undefined;
  deferrable?: boolean | undefined;
}

/** A result column: its name and PostgreSQL type, as the Neon HTTP format gives them. */
export interface SqlField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: string;
}

/** One statement's result, every value in PostgreSQL's text form (null for NULL). */
export interface SqlResult {
  command: string;
  rowCount: number | null;
  fields: SqlField[];
  rows: (string | null)[][];
}

/** Where a database pool connects, and how many connections it may hold. */
export interface SqlTarget {
  /** Identifies the connection pool (a Sluice pool's id). */
  poolId: number;
  /** The read role's connection string (never logged, never shown). */
  connectionString: string;
  /** The pool's `maxConcurrent`: the connection pool never holds more. */
  maxConnections: number;
}

/**
 * Runs read-only batches on databases. `run` rejects with a {@link SqlStatementError} for an
 * error the database reported on a statement, `ResultTooLargeError` (413),
 * `BadGatewayError` (502), `DatabaseBusyError` (503), or, when `signal` aborts, its reason.
 */
export interface SqlRunner {
  run(target: SqlTarget, batch: SqlBatch, signal: AbortSignal): Promise<SqlResult[]>;
  /** Closes every connection. */
  close(): Promise<void>;
}

/** The fields of a PostgreSQL error the Neon HTTP format passes on. */
export interface SqlErrorFields {
  message: string;
  /** SQLSTATE, e.g. `42501`. */
  code: string;
  severity: string | undefined;
  detail: string | undefined;
  hint: string | undefined;
  position: string | undefined;
  where: string | undefined;
  schema: string | undefined;
  table: string | undefined;
  column: string | undefined;
  dataType: string | undefined;
  constraint: string | undefined;
}

/**
 * The database refused a statement (syntax, permission, read-only transaction, timeout…).
 * `throttle` marks the errors adaptive learning treats like an upstream 429: too many
 * connections, serialization failures, deadlocks and lock timeouts.
 *
 * @example
 * ```ts
 * if (error instanceof SqlStatementError) return Response.json(error.fields, { status: 400 });
 * ```
 */
export class SqlStatementError extends Error {
  readonly throttle: boolean;

  constructor(readonly fields: SqlErrorFields) {
    super(fields.message);
    this.name = "SqlStatementError";
    this.throttle = THROTTLE_STATES.has(fields.code);
  }
}

/**
 * SQLSTATEs that mean "the database is overloaded or contended": too_many_connections,
 * serialization_failure, deadlock_detected, lock_not_available (a lock timeout).
 */
export const THROTTLE_STATES: ReadonlySet<string> = new Set(["53300", "40001", "40P01", "55P03"]);
