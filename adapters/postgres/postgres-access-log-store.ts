import type {
  AccessLogEntry,
  AccessLogStore,
  ResolvedAccessLogQuery,
} from "../../src/access-log/types.js";
import type { Queryable } from "./connect.js";
import { translatePostgresError } from "./postgres-errors.js";

const COLUMNS =
  "pool, at, key_id, outcome, reason, queued_ms, remote_address, source, upstream_status";

/**
 * The pool access log in PostgreSQL (table `access_log`). Wrap it in a `BufferedAccessLog`
 * so requests never wait for a write.
 *
 * @example
 * ```ts
 * const accessLog = new BufferedAccessLog({ store: new PostgresAccessLogStore(pool) });
 * ```
 */
export class PostgresAccessLogStore implements AccessLogStore {
  constructor(private readonly db: Queryable) {}

  async insert(entries: readonly AccessLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // unnest keeps the batch one statement, in order (ids follow the array).
    await this.query(
      `INSERT INTO access_log (${COLUMNS})
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[],
         $6::bigint[], $7::text[], $8::text[], $9::integer[])`,
      [
        entries.map((entry) => entry.pool),
        entries.map((entry) => entry.at),
        entries.map((entry) => entry.keyId),
        entries.map((entry) => entry.outcome),
        entries.map((entry) => entry.reason),
        entries.map((entry) => entry.queuedMs),
        entries.map((entry) => entry.remoteAddress),
        entries.map((entry) => entry.source),
        entries.map((entry) => entry.upstreamStatus),
      ],
    );
  }

  async list(pool: string, query: ResolvedAccessLogQuery): Promise<AccessLogEntry[]> {
    // id breaks ties between entries of the same millisecond: later appends come first.
    const result = await this.query(
      `SELECT ${COLUMNS} FROM access_log WHERE pool = $1 AND at >= $2 AND at < $3
       ORDER BY at DESC, id DESC LIMIT $4`,
      [pool, query.from, query.to, query.limit],
    );
    return result.rows.map((row: Record<string, unknown>) => ({
      at: row.at as number,
      pool: row.pool as string,
      keyId: row.key_id as number | null,
      outcome: row.outcome as AccessLogEntry["outcome"],
      reason: row.reason as AccessLogEntry["reason"],
      queuedMs: row.queued_ms as number,
      remoteAddress: row.remote_address as string | null,
      source: row.source as AccessLogEntry["source"],
      upstreamStatus: row.upstream_status as number | null,
    }));
  }

  async pruneBefore(pool: string, beforeMs: number): Promise<number> {
    const result = await this.query("DELETE FROM access_log WHERE pool = $1 AND at < $2", [
      pool,
      beforeMs,
    ]);
    return result.rowCount ?? 0;
  }

  async deletePool(pool: string): Promise<number> {
    const result = await this.query("DELETE FROM access_log WHERE pool = $1", [pool]);
    return result.rowCount ?? 0;
  }

  private async query(sql: string, values: unknown[]) {
    try {
      return await this.db.query(sql, values);
    } catch (error) {
      throw translatePostgresError(error, "access log");
    }
  }
}
