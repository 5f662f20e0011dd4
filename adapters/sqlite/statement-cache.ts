import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";

/**
 * Prepared statements by their SQL text, prepared on first use: preparing costs far more than
 * running, and a store's statements are a small fixed set. Shared by the SQLite stores.
 *
 * @example
 * ```ts
 * const statements = new StatementCache(db);
 * statements.get("SELECT hash FROM user_passwords WHERE user_id = ?").get(userId);
 * ```
 */
export class StatementCache {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly database: Database.Database) {}

  /** The prepared statement of `source`, prepared now if it is the first use. */
  get(source: string): Statement {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = this.database.prepare(source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  /** Forgets every statement (the database is closing). */
  clear(): void {
    this.statements.clear();
  }
}
