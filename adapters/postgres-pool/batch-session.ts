import pg from "pg";
import { InvalidArgumentError, ResultTooLargeError } from "../../src/errors.js";
import { statementError, statementTimeoutError } from "./database-errors.js";
import { sendCancel } from "./send-cancel.js";
import type { SqlBatch, SqlField, SqlResult, SqlStatement } from "./types.js";

/** Values are handed on in PostgreSQL's text form: the HTTP side decides how to show them. */
const TEXT_VALUES = {
  getTypeParser: () => (value: string) => value,
} as unknown as pg.CustomTypesConfig;

/** SQLSTATE of a cancelled statement (cancel request or statement timeout). */
const QUERY_CANCELED = "57014";

/** How long a cancelled statement may take to stop before its connection is dropped. */
const CANCEL_GRACE_MS = 5_000;

/**
 * How much later than the server's own statement timeout the client-side deadline cancels: a
 * statement the caller's `SET statement_timeout` did not touch is stopped by the server.
 */
const DEADLINE_SLACK_MS = 50;

/** ReadyForQuery's transaction status of a connection outside any transaction. */
const IDLE = "I";

/** node-postgres's wire connection, for the transaction status it reports. */
interface StatusEvents {
  prependListener(event: "readyForQuery", listener: (message: { status: string }) => void): void;
  off(event: "readyForQuery", listener: (message: { status: string }) => void): void;
}

const ISOLATION_SQL = {
  "read committed": "READ COMMITTED",
  "repeatable read": "REPEATABLE READ",
  serializable: "SERIALIZABLE",
} as const;

/**
 * The statements that open a batch's transaction, in one simple-protocol message (one round
 * trip): READ ONLY (a second fence behind the role's grants), the statement timeout local to
 * it, and a first query: once a transaction has taken a snapshot, PostgreSQL refuses
 * `SET transaction_read_only = off` ("must be set before any query"), which a caller's first
 * statement could otherwise send to turn the fence off.
 *
 * @example
 * ```ts
 * beginSql({ statements, statementTimeoutMs: 5000, maxRows: 100, maxResultBytes: 65536 });
 * // "BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = 5000; SELECT 1"
 * ```
 */
export function beginSql(batch: SqlBatch): string {
  const isolation = batch.isolation ? ` ISOLATION LEVEL ${ISOLATION_SQL[batch.isolation]}` : "";
  const deferrable = batch.deferrable ? " DEFERRABLE" : "";
  const timeout = Math.max(1, Math.floor(batch.statementTimeoutMs));
  return `BEGIN TRANSACTION${isolation} READ ONLY${deferrable}; SET LOCAL statement_timeout = ${timeout}; SELECT 1`;
}

/**
 * One batch on one checked-out connection: BEGIN READ ONLY, each statement in the extended
 * query protocol (which takes one statement only: `SELECT 1; DROP …` is refused by the
 * server), result caps counted row by row, then `finish()` hands the connection back clean
 * (ROLLBACK, DISCARD ALL) or drops it.
 *
 * Each caller statement also has a deadline kept here, not only `SET LOCAL statement_timeout`:
 * a statement of the batch may change that setting (`SET LOCAL statement_timeout = 0`,
 * `set_config`), so past the pool's statement timeout the statement is cancelled with a
 * protocol cancel and answered as the server's own timeout (SQLSTATE 57014).
 *
 * `cancel()` stops the running statement with a protocol cancel request (on its own short
 * socket, so the role never holds an extra session). A cancel that may still be in flight
 * when the statement ended on its own could hit the next statement, so such a connection is
 * dropped rather than reused.
 *
 * @example
 * ```ts
 * const session = new BatchSession(await pool.connect(), batch);
 * signal.addEventListener("abort", () => session.cancel(signal.reason));
 * try { return await session.run(); } finally { void session.finish(); }
 * ```
 */
export class BatchSession {
  private active: pg.Query | null = null;
  private cancelReason: unknown;
  /** A cancel request was sent and has not been seen to land (57014). */
  private cancelInFlight = false;
  private broken = false;
  private released = false;
  private graceTimer: NodeJS.Timeout | null = null;
  private rowsLeft: number;
  private bytesLeft: number;
  /** The transaction status of the last ReadyForQuery (`I` idle, `T` in a transaction, `E` failed). */
  private transactionStatus = IDLE;
  private readonly onReady = (message: { status: string }) => {
    this.transactionStatus = message.status;
  };

  constructor(
    private readonly client: pg.PoolClient,
    private readonly batch: SqlBatch,
  ) {
    this.rowsLeft = batch.maxRows;
    this.bytesLeft = batch.maxResultBytes;
    // Ahead of node-postgres's own listener, which ends the query: the status is known by then.
    this.events.prependListener("readyForQuery", this.onReady);
  }

  private get events(): StatusEvents {
    return (this.client as unknown as { connection: StatusEvents }).connection;
  }

  /** Runs the batch; rejects with the cancel reason once `cancel` was called. */
  async run(): Promise<SqlResult[]> {
    await this.execute({ text: beginSql(this.batch) }, false);
    const results: SqlResult[] = [];
    for (const statement of this.batch.statements) {
      results.push(await this.execute(statementConfig(statement), true));
    }
    return results;
  }

  /** Stops the batch: the running statement is cancelled, no further one starts. */
  cancel(reason: unknown): void {
    if (this.cancelReason !== undefined) return;
    this.cancelReason = reason;
    if (!this.active) return;
    this.cancelInFlight = true;
    sendCancel(this.client);
    // A server that never answers the cancel (network gone) must not keep the connection.
    this.graceTimer = setTimeout(() => this.drop(), CANCEL_GRACE_MS);
    this.graceTimer.unref();
  }

  /** Hands the connection back: rolled back and reset when it is known clean, else dropped. */
  async finish(): Promise<void> {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.events.off("readyForQuery", this.onReady);
    if (this.released) return;
    if (this.broken || this.cancelInFlight) {
      this.drop();
      return;
    }
    try {
      await this.client.query("ROLLBACK");
      // Session state a statement may leave behind a rollback: advisory locks, prepared
      // statements, LISTEN, settings changed with set_config(…, false) before it failed.
      await this.client.query("DISCARD ALL");
    } catch {
      this.drop();
      return;
    }
    this.released = true;
    this.client.release();
  }

  private drop(): void {
    if (this.released) return;
    this.released = true;
    this.client.release(true);
  }

  /** Runs one query; `capped`: its rows count against the batch's caps (the caller's statements). */
  private execute(config: pg.QueryConfig, capped: boolean): Promise<SqlResult> {
    if (this.cancelReason !== undefined) return Promise.reject(this.cancelReason);
    const arrays: pg.QueryArrayConfig = { ...config, rowMode: "array", types: TEXT_VALUES };
    const query = new pg.Query(arrays);
    const rows: (string | null)[][] = [];
    let fields: SqlField[] | undefined;
    const deadline = capped ? this.statementDeadline() : undefined;
    return new Promise((resolve, reject) => {
      query.on("row", (row: (string | null)[], result?: pg.QueryResult) => {
        if (!capped || this.cancelReason !== undefined) return;
        fields ??= this.countedFields(result as pg.QueryResult);
        if (this.counted(row, fields)) rows.push(row);
      });
      query.on("end", (results: pg.QueryResult | pg.QueryResult[]) => {
        clearTimeout(deadline);
        this.active = null;
        const result = lastResult(results);
        if (capped) fields ??= this.countedFields(result);
        if (this.cancelReason !== undefined) reject(this.cancelReason);
        else if (this.transactionStatus === IDLE) reject(new TransactionEndedError());
        else resolve(resultOf(result, fields ?? result.fields.map(fieldOf), rows));
      });
      query.on("error", (error: Error) => {
        clearTimeout(deadline);
        this.active = null;
        const mapped = statementError(error);
        if (error instanceof pg.DatabaseError && error.code === QUERY_CANCELED) {
          this.cancelInFlight = false;
        } else if (!(error instanceof pg.DatabaseError)) {
          this.broken = true;
        }
        reject(this.cancelReason ?? mapped);
      });
      this.active = query;
      this.client.query(query);
    });
  }

  /** Cancels the statement about to run once it has run past the pool's statement timeout. */
  private statementDeadline(): NodeJS.Timeout {
    const timer = setTimeout(
      () => this.cancel(statementTimeoutError()),
      this.batch.statementTimeoutMs + DEADLINE_SLACK_MS,
    );
    timer.unref();
    return timer;
  }

  /** A statement's fields, their JSON counted against the batch's bytes. */
  private countedFields(result: pg.QueryResult): SqlField[] {
    const fields = result.fields.map(fieldOf);
    this.spend(Buffer.byteLength(JSON.stringify(fields)));
    return fields;
  }

  /** Counts a row against the batch's caps; false (and the batch cancelled) past one. */
  private counted(row: readonly (string | null)[], fields: readonly SqlField[]): boolean {
    this.rowsLeft -= 1;
    if (this.rowsLeft < 0) {
      this.cancel(new ResultTooLargeError("rows", this.batch.maxRows));
      return false;
    }
    return this.spend((this.batch.rowBytes ?? textRowBytes)(row, fields));
  }

  /** Counts bytes of the answer; false (and the batch cancelled) past the cap. */
  private spend(bytes: number): boolean {
    this.bytesLeft -= bytes;
    if (this.bytesLeft >= 0) return true;
    this.cancel(new ResultTooLargeError("bytes", this.batch.maxResultBytes));
    return false;
  }
}

/** A row as an array of JSON strings (and nulls), and the comma before it. */
function textRowBytes(row: readonly (string | null)[]): number {
  return Buffer.byteLength(JSON.stringify(row)) + 1;
}

/**
 * A caller's statement ended the request's transaction (COMMIT, ROLLBACK, END, ABORT): the
 * next statement would run outside the read-only transaction and its timeout, so the batch
 * stops here (400 `invalid_request`).
 */
class TransactionEndedError extends InvalidArgumentError {
  constructor() {
    super(
      "A statement ended the transaction (COMMIT, ROLLBACK, END or ABORT): a database pool runs each request in one read-only transaction of its own, so transaction control is not available.",
    );
  }
}

/** A caller's statement: always the extended protocol, even without parameters. */
function statementConfig(statement: SqlStatement): pg.QueryConfig {
  return {
    text: statement.query,
    values: statement.params,
    queryMode: "extended",
  } as pg.QueryConfig;
}

/** Several results come only from the opening BEGIN; SET (simple protocol): its last one. */
function lastResult(results: pg.QueryResult | pg.QueryResult[]): pg.QueryResult {
  return Array.isArray(results) ? (results.at(-1) as pg.QueryResult) : results;
}

function resultOf(
  result: pg.QueryResult,
  fields: SqlField[],
  rows: (string | null)[][],
): SqlResult {
  return { command: result.command, rowCount: result.rowCount, fields, rows };
}

function fieldOf(field: pg.FieldDef): SqlField {
  return {
    name: field.name,
    tableID: field.tableID,
    columnID: field.columnID,
    dataTypeID: field.dataTypeID,
    dataTypeSize: field.dataTypeSize,
    dataTypeModifier: field.dataTypeModifier,
    format: "text",
  };
}
