import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";
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
  SESSION_COLUMNS,
  SETUP_TOKEN_COLUMNS,
  SIGN_IN_LINK_COLUMNS,
  unexpired,
} from "./auth-rows.js";
import { guardedWrite } from "./sqlite-errors.js";
import { StatementCache } from "./statement-cache.js";

/**
 * The persistent {@link AuthStore} on the Sluice database (migrations 7 and 8); its PostgreSQL twin
 * (`adapters/postgres/postgres-auth-store.ts`) reads the same rows (`auth-rows.ts`). Sessions and
 * sign-in writes are not catalog changes: they do not move the catalog's change marker.
 *
 * @example
 * ```ts
 * const auth = new AuthService({ store: new SqliteAuthStore(db), catalog: catalogStore, clock });
 * ```
 */
export class SqliteAuthStore implements AuthStore {
  private readonly statements: StatementCache;

  constructor(private readonly database: Database.Database) {
    this.statements = new StatementCache(database);
  }

  async getPasswordHash(userId: number): Promise<string | undefined> {
    const row = this.sql("SELECT hash FROM user_passwords WHERE user_id = ?").get(userId) as
      | { hash: string }
      | undefined;
    return row?.hash;
  }

  async setPasswordHash(userId: number, hash: string, at: number): Promise<void> {
    this.write("password", () =>
      this.sql(
        `INSERT INTO user_passwords (user_id, hash, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at`,
      ).run(userId, hash, at),
    );
  }

  async insertSession(session: SessionRecord): Promise<void> {
    this.write("session", () =>
      this.sql(
        `INSERT INTO sessions (id_hash, user_id, team_id, created_at, last_seen_at, expires_at)
         VALUES (@idHash, @userId, @teamId, @createdAt, @lastSeenAt, @expiresAt)`,
      ).run(session),
    );
  }

  async findSession(idHash: string): Promise<SessionRecord | undefined> {
    return this.sql(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id_hash = ?`).get(idHash) as
      | SessionRecord
      | undefined;
  }

  async touchSession(idHash: string, at: number): Promise<void> {
    this.write("session", () =>
      this.sql("UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?").run(at, idHash),
    );
  }

  async deleteSession(idHash: string): Promise<boolean> {
    return this.write(
      "session",
      () => this.sql("DELETE FROM sessions WHERE id_hash = ?").run(idHash).changes > 0,
    );
  }

  async deleteUserSessions(userId: number, teamId?: number): Promise<number> {
    return this.write("session", () =>
      teamId === undefined
        ? this.sql("DELETE FROM sessions WHERE user_id = ?").run(userId).changes
        : this.sql("DELETE FROM sessions WHERE user_id = ? AND team_id = ?").run(userId, teamId)
            .changes,
    );
  }

  async insertSignInLink(link: SignInLinkRecord): Promise<void> {
    this.write("sign-in link", () =>
      this.sql(
        `INSERT INTO sign_in_links (token_hash, user_id, team_id, created_at, expires_at)
         VALUES (@tokenHash, @userId, @teamId, @createdAt, @expiresAt)`,
      ).run(link),
    );
  }

  async consumeSignInLink(tokenHash: string, at: number): Promise<SignInLinkRecord | undefined> {
    // DELETE … RETURNING: of two requests racing for one link, only one gets the row.
    const row = this.write("sign-in link", () =>
      this.sql(
        `DELETE FROM sign_in_links WHERE token_hash = ? RETURNING ${SIGN_IN_LINK_COLUMNS}`,
      ).get(tokenHash),
    ) as SignInLinkRecord | undefined;
    return unexpired(row, at);
  }

  async recordFailure(key: string, at: number, windowMs: number): Promise<number> {
    const row = this.write("sign-in throttle", () =>
      this.sql(
        `INSERT INTO sign_in_failures (key, window_start, count) VALUES (@key, @at, 1)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN @at < window_start + @windowMs THEN count + 1 ELSE 1 END,
           window_start = CASE WHEN @at < window_start + @windowMs THEN window_start ELSE @at END
         RETURNING count`,
      ).get({ key, at, windowMs }),
    ) as { count: number };
    return row.count;
  }

  async failures(key: string, at: number, windowMs: number): Promise<FailureWindow> {
    const row = this.sql("SELECT window_start, count FROM sign_in_failures WHERE key = ?").get(
      key,
    ) as FailureRow | undefined;
    return failureWindowOf(row, at, windowMs);
  }

  async clearFailures(key: string): Promise<void> {
    this.write("sign-in throttle", () =>
      this.sql("DELETE FROM sign_in_failures WHERE key = ?").run(key),
    );
  }

  async insertSetupToken(token: SetupTokenRecord): Promise<void> {
    this.write("setup link", () =>
      this.sql(
        `INSERT INTO setup_tokens (token_hash, created_at, expires_at)
         VALUES (@tokenHash, @createdAt, @expiresAt)`,
      ).run(token),
    );
  }

  async findSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined> {
    const row = this.sql(
      `SELECT ${SETUP_TOKEN_COLUMNS} FROM setup_tokens WHERE token_hash = ?`,
    ).get(tokenHash) as SetupTokenRecord | undefined;
    return unexpired(row, at);
  }

  async consumeSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined> {
    // One transaction (a write lock from its start): of two setups racing, even with
    // different tokens, only the first finds its token; it takes every other one out too.
    const take = this.database.transaction(() => {
      const row = this.sql(
        `SELECT ${SETUP_TOKEN_COLUMNS} FROM setup_tokens WHERE token_hash = ?`,
      ).get(tokenHash) as SetupTokenRecord | undefined;
      if (!row) return undefined;
      this.sql("DELETE FROM setup_tokens WHERE token_hash = ?").run(tokenHash);
      if (at >= row.expiresAt) return undefined;
      this.sql("DELETE FROM setup_tokens").run();
      return row;
    }).immediate;
    return this.write("setup link", take);
  }

  async deleteSetupTokens(): Promise<void> {
    this.write("setup link", () => this.sql("DELETE FROM setup_tokens").run());
  }

  async deleteExpired(at: number, limits: ExpiryLimits): Promise<number> {
    return this.write("expired sign-in state", () =>
      this.database.transaction(() => {
        let deleted = 0;
        for (const { sql, limit } of DELETE_EXPIRED_STATEMENTS) {
          const values = limit === null ? { at } : { at, limit: limits[limit] };
          deleted += this.sql(sql).run(values).changes;
        }
        return deleted;
      })(),
    );
  }

  private write<T>(what: string, body: () => T): T {
    return guardedWrite(what, body);
  }

  private sql(source: string): Statement {
    return this.statements.get(source);
  }
}
