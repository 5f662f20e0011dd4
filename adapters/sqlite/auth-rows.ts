import type { ExpiryLimits, FailureWindow } from "../../src/auth/types.js";

// Dashboard sign-in rows as both SQL stores keep them (snake_case columns, epoch-ms times),
// shared by the SQLite and PostgreSQL auth stores as `oauth-rows.ts` is by their OAuth stores.
// The column lists alias each column to its record field in double quotes, which both SQLite
// and PostgreSQL (that would fold an unquoted alias to lower case) keep as written: a row read
// with them is the record itself.

/** `sessions` columns as a {@link SessionRecord}'s fields. */
export const SESSION_COLUMNS =
  'id_hash AS "idHash", user_id AS "userId", team_id AS "teamId", created_at AS "createdAt", ' +
  'last_seen_at AS "lastSeenAt", expires_at AS "expiresAt"';

/** `sign_in_links` columns as a {@link SignInLinkRecord}'s fields. */
export const SIGN_IN_LINK_COLUMNS =
  'token_hash AS "tokenHash", user_id AS "userId", team_id AS "teamId", created_at AS "createdAt", ' +
  'expires_at AS "expiresAt"';

/** `setup_tokens` columns as a {@link SetupTokenRecord}'s fields. */
export const SETUP_TOKEN_COLUMNS =
  'token_hash AS "tokenHash", created_at AS "createdAt", expires_at AS "expiresAt"';

/**
 * The deletions of `AuthStore.deleteExpired`, in both dialects: `@at` is the time and
 * `@limit` the idle time (sessions) or the failure window (failure counts). The PostgreSQL
 * store passes them as `$1` and `$2` ({@link positionalSql}).
 */
export const DELETE_EXPIRED_STATEMENTS: readonly {
  sql: string;
  limit: keyof ExpiryLimits | null;
}[] = [
  {
    sql: "DELETE FROM sessions WHERE expires_at <= @at OR last_seen_at + @limit <= @at",
    limit: "idleMs",
  },
  { sql: "DELETE FROM sign_in_links WHERE expires_at <= @at", limit: null },
  { sql: "DELETE FROM setup_tokens WHERE expires_at <= @at", limit: null },
  {
    sql: "DELETE FROM sign_in_failures WHERE window_start + @limit <= @at",
    limit: "failureWindowMs",
  },
];

/** A statement of {@link DELETE_EXPIRED_STATEMENTS} with PostgreSQL's `$1` (at) and `$2` (limit). */
export function positionalSql(sql: string): string {
  return sql.replaceAll("@at", "$1").replaceAll("@limit", "$2");
}

/** A key's failed sign-ins as both SQL stores keep them (`sign_in_failures`). */
export interface FailureRow {
  window_start: number;
  count: number;
}

/**
 * The failure window running at `at` for a row of `sign_in_failures` (count 0 once the
 * row's window is over, or when there is no row).
 *
 * @example
 * ```ts
 * failureWindowOf({ window_start: 1_000, count: 3 }, 2_000, 900_000); // { count: 3, endsAt: 901_000 }
 * ```
 */
export function failureWindowOf(
  row: FailureRow | undefined,
  at: number,
  windowMs: number,
): FailureWindow {
  return row && at < row.window_start + windowMs
    ? { count: row.count, endsAt: row.window_start + windowMs }
    : { count: 0, endsAt: at };
}

/**
 * The link or token while it has not expired at `at`; else undefined.
 *
 * @example
 * ```ts
 * return unexpired(row, now); // a consumed link that had expired does not sign anyone in
 * ```
 */
export function unexpired<T extends { expiresAt: number }>(
  record: T | undefined,
  at: number,
): T | undefined {
  return record && at < record.expiresAt ? record : undefined;
}
