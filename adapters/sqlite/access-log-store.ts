import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";
import {
  BufferedAccessLog,
  type BufferedAccessLogOptions,
} from "../../src/access-log/buffered-access-log.js";
import type {
  AccessLogEntry,
  AccessLogStore,
  AccessOutcome,
  AccessSource,
  ResolvedAccessLogQuery,
} from "../../src/access-log/types.js";
import type { RejectionReason } from "../../src/errors.js";
import { checkpointFreeWindow } from "./background-checkpoints.js";
import { databaseGate } from "./database-gate.js";
import { backgroundWrite, guardedWrite } from "./sqlite-errors.js";

interface AccessLogRow {
  pool: string;
  at: number;
  key_id: number | null;
  outcome: AccessOutcome;
  reason: RejectionReason | null;
  queued_ms: number;
  remote_address: string | null;
  source: AccessSource;
  upstream_status: number | null;
}

const COLUMNS =
  "pool, at, key_id, outcome, reason, queued_ms, remote_address, source, upstream_status";
/** Rows per multi-row INSERT: one statement step per chunk, not per row (the log's hot path). */
const ROWS_PER_INSERT = 32;
const ROW_PLACEHOLDERS = "(?, ?, ?, ?, ?, ?, ?, ?, ?)";

function insertStatement(database: Database.Database, rows: number): Statement<unknown[]> {
  const values = Array.from({ length: rows }, () => ROW_PLACEHOLDERS).join(", ");
  return database.prepare(`INSERT INTO access_log (${COLUMNS}) VALUES ${values}`);
}

/** An entry's column values, in {@link COLUMNS} order, appended to `into`. */
function pushRow(into: unknown[], entry: AccessLogEntry): void {
  into.push(
    entry.pool,
    entry.at,
    entry.keyId,
    entry.outcome,
    entry.reason,
    entry.queuedMs,
    entry.remoteAddress,
    entry.source,
    entry.upstreamStatus,
  );
}

/**
 * The pool access log in SQLite (table `access_log`, created by the migrations), on a
 * database opened with `openSluiceDatabase`. Wrap it in a {@link BufferedAccessLog} (or use
 * {@link createSqliteAccessLog}) so requests never wait for a write.
 *
 * @example
 * ```ts
 * const store = new SqliteAccessLogStore(db);
 * await store.insert([entry]);
 * await store.list("llm", { from: 0, to: Date.now(), limit: 50 });
 * ```
 */
export class SqliteAccessLogStore implements AccessLogStore {
  private readonly insertOne: Statement<unknown[]>;
  private readonly insertChunk: Statement<unknown[]>;
  private readonly selectRange: Statement<[string, number, number, number]>;
  private readonly deleteBefore: Statement<[string, number]>;
  private readonly deleteAll: Statement<[string]>;
  private readonly insertAll: Database.Transaction<(entries: readonly AccessLogEntry[]) => void>;

  constructor(private readonly database: Database.Database) {
    this.insertOne = insertStatement(database, 1);
    this.insertChunk = insertStatement(database, ROWS_PER_INSERT);
    // id breaks ties between entries of the same millisecond: later appends come first.
    this.selectRange = database.prepare(
      `SELECT ${COLUMNS} FROM access_log
       WHERE pool = ? AND at >= ? AND at < ? ORDER BY at DESC, id DESC LIMIT ?`,
    );
    this.deleteBefore = database.prepare("DELETE FROM access_log WHERE pool = ? AND at < ?");
    this.deleteAll = database.prepare("DELETE FROM access_log WHERE pool = ?");
    this.insertAll = database.transaction((entries: readonly AccessLogEntry[]) => {
      let at = 0;
      // Row order is append order (ids break ties between entries of one millisecond).
      for (; at + ROWS_PER_INSERT <= entries.length; at += ROWS_PER_INSERT) {
        const values: unknown[] = [];
        for (let i = at; i < at + ROWS_PER_INSERT; i++)
          pushRow(values, entries[i] as AccessLogEntry);
        this.insertChunk.run(values);
      }
      for (; at < entries.length; at++) {
        const values: unknown[] = [];
        pushRow(values, entries[at] as AccessLogEntry);
        this.insertOne.run(values);
      }
    });
  }

  async insert(entries: readonly AccessLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await checkpointFreeWindow(this.database);
    backgroundWrite(this.database, "access log", () => this.insertAll.immediate(entries));
  }

  async list(pool: string, query: ResolvedAccessLogQuery): Promise<AccessLogEntry[]> {
    await databaseGate(this.database).idle();
    const rows = this.selectRange.all(pool, query.from, query.to, query.limit) as AccessLogRow[];
    return rows.map(entryFromRow);
  }

  async pruneBefore(pool: string, beforeMs: number): Promise<number> {
    await databaseGate(this.database).idle();
    return backgroundWrite(
      this.database,
      "access log",
      () => this.deleteBefore.run(pool, beforeMs).changes,
    );
  }

  async deletePool(pool: string): Promise<number> {
    await databaseGate(this.database).idle();
    return guardedWrite("access log", () => this.deleteAll.run(pool).changes);
  }
}

/**
 * A buffered access log over SQLite: what a server passes to the Lock API and proxy apps.
 *
 * @example
 * ```ts
 * const accessLog = createSqliteAccessLog(db, { clock: systemClock, onError: console.error });
 * // … on shutdown, before closing the database:
 * await accessLog.close();
 * ```
 */
export function createSqliteAccessLog(
  database: Database.Database,
  options: Omit<BufferedAccessLogOptions, "store"> = {},
): BufferedAccessLog {
  return new BufferedAccessLog({ ...options, store: new SqliteAccessLogStore(database) });
}

function entryFromRow(row: AccessLogRow): AccessLogEntry {
  return {
    at: row.at,
    pool: row.pool,
    keyId: row.key_id,
    outcome: row.outcome,
    reason: row.reason,
    queuedMs: row.queued_ms,
    remoteAddress: row.remote_address,
    source: row.source,
    upstreamStatus: row.upstream_status,
  };
}
