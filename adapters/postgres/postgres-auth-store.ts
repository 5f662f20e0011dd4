import type pg from "pg";
import type {
  AuthStore,
  ExpiryLimits,
  FailureWindow,
  SessionRecord,
  SetupTokenRecord,
  SignInLinkRecord,
} from "../../src/auth/types.js";
import {
  DELETE_EXPIRED_STATEMENTS,
  type FailureRow,
  failureWindowOf,
  positionalSql,
  SESSION_COLUMNS,
  SETUP_TOKEN_COLUMNS,
  SIGN_IN_LINK_COLUMNS,
  unexpired,
} from "../sqlite/auth-rows.js";
import { withTransaction } from "./connect.js";
import { translated } from "./postgres-errors.js";

/**
 * The dashboard's sign-in records in PostgreSQL (migration 5), so a person signed in through
 * one server of a fleet is signed in on all of them, a link minted by `sluice user
 * sign-in-link` works on any, and failed sign-ins count across the fleet. Like the SQLite
 * store, it keeps session ids and link tokens only as SHA-256 hashes and passwords as scrypt
 * hashes; these writes are no catalog changes (they fire no NOTIFY).
 *
 * @example
 * ```ts
 * const auth = new AuthService({ store: new PostgresAuthStore(pool), catalog: catalogStore, clock });
 * ```
 */
export class PostgresAuthStore implements AuthStore {
  constructor(private readonly pool: pg.Pool) {}

  async getPasswordHash(userId: number): Promise<string | undefined> {
    const row = await this.one<{ hash: string }>(
      "password",
      "SELECT hash FROM user_passwords WHERE user_id = $1",
      [userId],
    );
    return row?.hash;
  }

  async setPasswordHash(userId: number, hash: string, at: number): Promise<void> {
    await this.query(
      "password",
      `INSERT INTO user_passwords (user_id, hash, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at`,
      [userId, hash, at],
    );
  }

  async insertSession(session: SessionRecord): Promise<void> {
    await this.query(
      "session",
      `INSERT INTO sessions (id_hash, user_id, team_id, created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        session.idHash,
        session.userId,
        session.teamId,
        session.createdAt,
        session.lastSeenAt,
        session.expiresAt,
      ],
    );
  }

  findSession(idHash: string): Promise<SessionRecord | undefined> {
    return this.one<SessionRecord>(
      "session",
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id_hash = $1`,
      [idHash],
    );
  }

  async touchSession(idHash: string, at: number): Promise<void> {
    await this.query("session", "UPDATE sessions SET last_seen_at = $1 WHERE id_hash = $2", [
      at,
      idHash,
    ]);
  }

  async deleteSession(idHash: string): Promise<boolean> {
    const result = await this.query("session", "DELETE FROM sessions WHERE id_hash = $1", [idHash]);
    return (result.rowCount ?? 0) > 0;
  }

  async deleteUserSessions(userId: number, teamId?: number): Promise<number> {
    const result =
      teamId === undefined
        ? await this.query("session", "DELETE FROM sessions WHERE user_id = $1", [userId])
        : await this.query("session", "DELETE FROM sessions WHERE user_id = $1 AND team_id = $2", [
            userId,
            teamId,
          ]);
    return result.rowCount ?? 0;
  }

  async insertSignInLink(link: SignInLinkRecord): Promise<void> {
    await this.query(
      "sign-in link",
      `INSERT INTO sign_in_links (token_hash, user_id, team_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [link.tokenHash, link.userId, link.teamId, link.createdAt, link.expiresAt],
    );
  }

  async consumeSignInLink(tokenHash: string, at: number): Promise<SignInLinkRecord | undefined> {
    // DELETE … RETURNING: of two servers racing for one link, only one gets the row.
    const row = await this.one<SignInLinkRecord>(
      "sign-in link",
      `DELETE FROM sign_in_links WHERE token_hash = $1 RETURNING ${SIGN_IN_LINK_COLUMNS}`,
      [tokenHash],
    );
    return unexpired(row, at);
  }

  async recordFailure(key: string, at: number, windowMs: number): Promise<number> {
    // One upsert: failures counted by several servers at once all add up.
    const row = await this.one<{ count: number }>(
      "sign-in throttle",
      `INSERT INTO sign_in_failures AS f (key, window_start, count) VALUES ($1, $2::bigint, 1)
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN $2::bigint < f.window_start + $3::bigint THEN f.count + 1 ELSE 1 END,
         window_start = CASE WHEN $2::bigint < f.window_start + $3::bigint
           THEN f.window_start ELSE $2::bigint END
       RETURNING count`,
      [key, at, windowMs],
    );
    return row!.count;
  }

  async failures(key: string, at: number, windowMs: number): Promise<FailureWindow> {
    const row = await this.one<FailureRow>(
      "sign-in throttle",
      "SELECT window_start, count FROM sign_in_failures WHERE key = $1",
      [key],
    );
    return failureWindowOf(row, at, windowMs);
  }

  async clearFailures(key: string): Promise<void> {
    await this.query("sign-in throttle", "DELETE FROM sign_in_failures WHERE key = $1", [key]);
  }

  async insertSetupToken(token: SetupTokenRecord): Promise<void> {
    await this.query(
      "setup link",
      "INSERT INTO setup_tokens (token_hash, created_at, expires_at) VALUES ($1, $2, $3)",
      [token.tokenHash, token.createdAt, token.expiresAt],
    );
  }

  async findSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined> {
    const row = await this.one<SetupTokenRecord>(
      "setup link",
      `SELECT ${SETUP_TOKEN_COLUMNS} FROM setup_tokens WHERE token_hash = $1`,
      [tokenHash],
    );
    return unexpired(row, at);
  }

  consumeSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined> {
    return translated("setup link", () =>
      withTransaction(this.pool, async (client) => {
        // The table lock queues setups racing on several servers, even with different
        // tokens (row locks alone would let each take its own); plain reads go on meanwhile.
        await client.query("LOCK TABLE setup_tokens IN EXCLUSIVE MODE");
        const { rows } = await client.query<SetupTokenRecord>(
          `DELETE FROM setup_tokens WHERE token_hash = $1 RETURNING ${SETUP_TOKEN_COLUMNS}`,
          [tokenHash],
        );
        const row = unexpired(rows[0], at);
        if (row) await client.query("DELETE FROM setup_tokens");
        return row;
      }),
    );
  }

  async deleteSetupTokens(): Promise<void> {
    await this.query("setup link", "DELETE FROM setup_tokens", []);
  }

  async deleteExpired(at: number, limits: ExpiryLimits): Promise<number> {
    let deleted = 0;
    for (const { sql, limit } of DELETE_EXPIRED_STATEMENTS) {
      const values = limit === null ? [at] : [at, limits[limit]];
      const result = await this.query("expired sign-in state", positionalSql(sql), values);
      deleted += result.rowCount ?? 0;
    }
    return deleted;
  }

  private query(what: string, sql: string, values: unknown[]): Promise<pg.QueryResult> {
    return translated(what, () => this.pool.query(sql, values));
  }

  private async one<R extends pg.QueryResultRow>(
    what: string,
    sql: string,
    values: unknown[],
  ): Promise<R | undefined> {
    const { rows } = await translated(what, () => this.pool.query<R>(sql, values));
    return rows[0];
  }
}
