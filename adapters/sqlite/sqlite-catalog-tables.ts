import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";
import { budgetInUse, budgetNameTaken } from "../../src/catalog/budget-in-use.js";
import type { SynchronousCatalogOperations } from "../../src/catalog/synchronous-catalog-store.js";
import type {
  ApiTokenRecord,
  BudgetRecord,
  MembershipRecord,
  PoolInput,
  PoolKeyRecord,
  PoolRecord,
  Role,
  TeamRecord,
  UserRecord,
} from "../../src/catalog/types.js";
import type { Clock } from "../../src/clock/clock.js";
import { ConflictError, InvalidArgumentError } from "../../src/errors.js";
import {
  type ApiTokenRow,
  apiTokenFromRow,
  apiTokenParams,
  type BudgetRow,
  budgetFromRow,
  POOL_WRITE_COLUMNS,
  type PoolKeyRow,
  type PoolRow,
  poolFromRow,
  poolKeyFromRow,
  poolKeyParams,
  poolParams,
} from "./catalog-rows.js";
import type { SqliteChangeMarker } from "./change-marker.js";
import { guardedWrite } from "./sqlite-errors.js";
import { StatementCache } from "./statement-cache.js";

const POOL_INSERT = `INSERT INTO pools (${POOL_WRITE_COLUMNS.join(", ")}, created_at)
  VALUES (${POOL_WRITE_COLUMNS.map((c) => `@${c}`).join(", ")}, @updated_at)`;
const POOL_UPDATE = `UPDATE pools SET ${POOL_WRITE_COLUMNS.map((c) => `${c} = @${c}`).join(", ")}
  WHERE id = @id`;

/**
 * The catalog tables of a Sluice database, answered synchronously (better-sqlite3). Several
 * processes may share the file: writes that need a check first run in IMMEDIATE
 * transactions. `SqliteCatalogStore` puts the async boundary around it.
 */
export class SqliteCatalogTables implements SynchronousCatalogOperations {
  private readonly statements: StatementCache;

  constructor(
    private readonly database: Database.Database,
    private readonly clock: Clock,
    private readonly marker: SqliteChangeMarker,
  ) {
    this.statements = new StatementCache(database);
  }

  createTeam(input: { name: string; slug: string }): TeamRecord {
    return this.write("team", () => {
      if (this.findTeamBySlug(input.slug)) {
        throw new ConflictError(`The team slug "${input.slug}" is taken.`);
      }
      const { lastInsertRowid } = this.sql("INSERT INTO teams (name, slug) VALUES (?, ?)").run(
        input.name,
        input.slug,
      );
      return { id: Number(lastInsertRowid), name: input.name, slug: input.slug };
    });
  }

  findTeamBySlug(slug: string): TeamRecord | undefined {
    return this.sql("SELECT id, name, slug FROM teams WHERE slug = ?").get(slug) as
      | TeamRecord
      | undefined;
  }

  getTeam(teamId: number): TeamRecord | undefined {
    return this.sql("SELECT id, name, slug FROM teams WHERE id = ?").get(teamId) as
      | TeamRecord
      | undefined;
  }

  listTeams(): TeamRecord[] {
    return this.sql("SELECT id, name, slug FROM teams ORDER BY id").all() as TeamRecord[];
  }

  createUser(input: { name: string; email: string }): UserRecord {
    return this.write("user", () => {
      if (this.findUserByEmail(input.email))
        throw new ConflictError("A user with that email exists.");
      const { lastInsertRowid } = this.sql("INSERT INTO users (name, email) VALUES (?, ?)").run(
        input.name,
        input.email,
      );
      return { id: Number(lastInsertRowid), name: input.name, email: input.email };
    });
  }

  findUserByEmail(email: string): UserRecord | undefined {
    return this.sql("SELECT id, name, email FROM users WHERE email = ?").get(email) as
      | UserRecord
      | undefined;
  }

  getUser(userId: number): UserRecord | undefined {
    return this.sql("SELECT id, name, email FROM users WHERE id = ?").get(userId) as
      | UserRecord
      | undefined;
  }

  setMembership(membership: MembershipRecord): void {
    this.write("membership", () => {
      this.requireTeam(membership.teamId);
      if (!this.getUser(membership.userId)) throw new InvalidArgumentError("Unknown user.");
      this.sql(
        `INSERT INTO memberships (team_id, user_id, role) VALUES (?, ?, ?)
         ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role`,
      ).run(membership.teamId, membership.userId, membership.role);
    });
  }

  getMembership(teamId: number, userId: number): MembershipRecord | undefined {
    const row = this.sql("SELECT role FROM memberships WHERE team_id = ? AND user_id = ?").get(
      teamId,
      userId,
    ) as { role: Role } | undefined;
    return row && { teamId, userId, role: row.role };
  }

  listMemberships(teamId: number): MembershipRecord[] {
    const rows = this.sql(
      "SELECT user_id AS userId, role FROM memberships WHERE team_id = ? ORDER BY user_id",
    ).all(teamId) as { userId: number; role: Role }[];
    return rows.map((row) => ({ teamId, userId: row.userId, role: row.role }));
  }

  listUserMemberships(userId: number): MembershipRecord[] {
    const rows = this.sql(
      "SELECT team_id AS teamId, role FROM memberships WHERE user_id = ? ORDER BY team_id",
    ).all(userId) as { teamId: number; role: Role }[];
    return rows.map((row) => ({ teamId: row.teamId, userId, role: row.role }));
  }

  removeMembership(teamId: number, userId: number): boolean {
    return this.write("membership", () => {
      const { changes } = this.sql("DELETE FROM memberships WHERE team_id = ? AND user_id = ?").run(
        teamId,
        userId,
      );
      return changes > 0;
    });
  }

  insertApiToken(input: Omit<ApiTokenRecord, "id">): ApiTokenRecord {
    return this.write("API token", () => {
      this.requireTeam(input.teamId);
      if (!this.getUser(input.userId)) throw new InvalidArgumentError("Unknown user.");
      const { lastInsertRowid } = this.sql(
        `INSERT INTO api_tokens (team_id, user_id, name, abilities, token_hash, created_at,
           expires_at, revoked_at, last_used_at)
         VALUES (@team_id, @user_id, @name, @abilities, @token_hash, @created_at, @expires_at,
           @revoked_at, @last_used_at)`,
      ).run(apiTokenParams(input));
      return { ...input, abilities: [...input.abilities], id: Number(lastInsertRowid) };
    });
  }

  findApiTokenByHash(tokenHash: string): ApiTokenRecord | undefined {
    const row = this.sql("SELECT * FROM api_tokens WHERE token_hash = ?").get(tokenHash);
    return row ? apiTokenFromRow(row as ApiTokenRow) : undefined;
  }

  listApiTokens(teamId: number): ApiTokenRecord[] {
    const rows = this.sql("SELECT * FROM api_tokens WHERE team_id = ? ORDER BY id").all(teamId);
    return (rows as ApiTokenRow[]).map(apiTokenFromRow);
  }

  revokeApiToken(teamId: number, tokenId: number, at: number): ApiTokenRecord | undefined {
    return this.write("API token", () => {
      this.sql(
        "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND team_id = ? AND revoked_at IS NULL",
      ).run(at, tokenId, teamId);
      const row = this.sql("SELECT * FROM api_tokens WHERE id = ? AND team_id = ?").get(
        tokenId,
        teamId,
      );
      return row ? apiTokenFromRow(row as ApiTokenRow) : undefined;
    });
  }

  touchApiToken(tokenId: number, at: number): void {
    // Not counted as a local change: use timestamps mean nothing to anyone syncing the catalog.
    guardedWrite("API token", () =>
      this.sql("UPDATE api_tokens SET last_used_at = ? WHERE id = ?").run(at, tokenId),
    );
  }

  upsertBudget(
    teamId: number,
    input: { name: string; originMaxConcurrent: number | null },
  ): BudgetRecord {
    return this.write("budget", () => {
      this.requireTeam(teamId);
      const row = this.sql(
        `INSERT INTO budgets (team_id, name, origin_max_concurrent) VALUES (?, ?, ?)
         ON CONFLICT (team_id, name) DO UPDATE SET origin_max_concurrent = excluded.origin_max_concurrent
         RETURNING *`,
      ).get(teamId, input.name, input.originMaxConcurrent);
      return budgetFromRow(row as BudgetRow);
    });
  }

  getBudget(teamId: number, budgetId: number): BudgetRecord | undefined {
    const row = this.sql("SELECT * FROM budgets WHERE id = ? AND team_id = ?").get(
      budgetId,
      teamId,
    );
    return row ? budgetFromRow(row as BudgetRow) : undefined;
  }

  renameBudget(teamId: number, budgetId: number, name: string): BudgetRecord | undefined {
    return this.write("budget", () => {
      const budget = this.getBudget(teamId, budgetId);
      if (!budget || budget.name === name) return budget;
      if (this.sql("SELECT 1 FROM budgets WHERE team_id = ? AND name = ?").get(teamId, name)) {
        throw budgetNameTaken(name);
      }
      const row = this.sql("UPDATE budgets SET name = ? WHERE id = ? RETURNING *").get(
        name,
        budgetId,
      );
      return budgetFromRow(row as BudgetRow);
    });
  }

  deleteBudget(teamId: number, budgetId: number): boolean {
    return this.write("budget", () => {
      const budget = this.getBudget(teamId, budgetId);
      if (!budget) return false;
      const members = this.sql("SELECT subdomain FROM pools WHERE budget_id = ? ORDER BY id").all(
        budgetId,
      ) as { subdomain: string }[];
      if (members.length > 0) {
        throw budgetInUse(
          budget.name,
          members.map((pool) => pool.subdomain),
        );
      }
      this.sql("DELETE FROM budgets WHERE id = ?").run(budgetId);
      return true;
    });
  }

  listBudgets(teamId: number): BudgetRecord[] {
    const rows = this.sql("SELECT * FROM budgets WHERE team_id = ? ORDER BY id").all(teamId);
    return (rows as BudgetRow[]).map(budgetFromRow);
  }

  listAllBudgets(): BudgetRecord[] {
    return (this.sql("SELECT * FROM budgets ORDER BY id").all() as BudgetRow[]).map(budgetFromRow);
  }

  upsertPool(teamId: number, input: PoolInput): PoolRecord {
    return this.write("pool", () => {
      this.requireTeam(teamId);
      if (input.budgetId !== null && !this.getBudget(teamId, input.budgetId)) {
        throw new InvalidArgumentError("The budget is not one of the team's budgets.");
      }
      const existing = this.findPoolBySubdomain(input.subdomain);
      if (existing && existing.teamId !== teamId) {
        throw new ConflictError(`The subdomain "${input.subdomain}" is taken.`);
      }
      const params = poolParams(teamId, input, this.clock.now());
      if (existing) this.sql(POOL_UPDATE).run({ ...params, id: existing.id });
      else this.sql(POOL_INSERT).run(params);
      return this.findPoolBySubdomain(input.subdomain)!;
    });
  }

  getPoolBySubdomain(teamId: number, subdomain: string): PoolRecord | undefined {
    const row = this.sql("SELECT * FROM pools WHERE subdomain = ? AND team_id = ?").get(
      subdomain,
      teamId,
    );
    return row ? poolFromRow(row as PoolRow) : undefined;
  }

  findPoolBySubdomain(subdomain: string): PoolRecord | undefined {
    const row = this.sql("SELECT * FROM pools WHERE subdomain = ?").get(subdomain);
    return row ? poolFromRow(row as PoolRow) : undefined;
  }

  listPools(teamId: number): PoolRecord[] {
    const rows = this.sql("SELECT * FROM pools WHERE team_id = ? ORDER BY id").all(teamId);
    return (rows as PoolRow[]).map(poolFromRow);
  }

  listAllPools(): PoolRecord[] {
    return (this.sql("SELECT * FROM pools ORDER BY id").all() as PoolRow[]).map(poolFromRow);
  }

  /**
   * Deletes the pool and, in the same transaction, its metrics and access log (both keyed by
   * subdomain). A server that is down when a pool is deleted (say by `sluice apply`) never
   * sees the deletion; without this, a new pool taking the subdomain, maybe another team's,
   * would inherit the rows of the old one's last minute.
   */
  deletePool(teamId: number, poolId: number): boolean {
    return this.write("pool", () => {
      const row = this.sql("SELECT subdomain FROM pools WHERE id = ? AND team_id = ?").get(
        poolId,
        teamId,
      ) as { subdomain: string } | undefined;
      if (!row) return false;
      this.sql("DELETE FROM pools WHERE id = ?").run(poolId);
      this.sql("DELETE FROM metrics_buckets WHERE pool = ?").run(row.subdomain);
      this.sql("DELETE FROM access_log WHERE pool = ?").run(row.subdomain);
      return true;
    });
  }

  insertPoolKey(input: Omit<PoolKeyRecord, "id">): PoolKeyRecord {
    return this.write("pool key", () => {
      if (!this.sql("SELECT 1 FROM pools WHERE id = ?").get(input.poolId)) {
        throw new InvalidArgumentError("Unknown pool.");
      }
      const { lastInsertRowid } = this.sql(
        `INSERT INTO pool_keys (pool_id, label, last_four, key_hash, access, expires_at,
           revoked_at, created_at, signing_secret, request_secret)
         VALUES (@pool_id, @label, @last_four, @key_hash, @access, @expires_at, @revoked_at,
           @created_at, @signing_secret, @request_secret)`,
      ).run(poolKeyParams(input));
      return this.getPoolKey(input.poolId, Number(lastInsertRowid))!;
    });
  }

  getPoolKey(poolId: number, keyId: number): PoolKeyRecord | undefined {
    const row = this.sql("SELECT * FROM pool_keys WHERE id = ? AND pool_id = ?").get(keyId, poolId);
    return row ? poolKeyFromRow(row as PoolKeyRow) : undefined;
  }

  findPoolKeyByHash(keyHash: string): PoolKeyRecord | undefined {
    const row = this.sql("SELECT * FROM pool_keys WHERE key_hash = ?").get(keyHash);
    return row ? poolKeyFromRow(row as PoolKeyRow) : undefined;
  }

  listPoolKeys(poolId: number): PoolKeyRecord[] {
    const rows = this.sql("SELECT * FROM pool_keys WHERE pool_id = ? ORDER BY id").all(poolId);
    return (rows as PoolKeyRow[]).map(poolKeyFromRow);
  }

  revokePoolKey(poolId: number, keyId: number, at: number): PoolKeyRecord | undefined {
    return this.write("pool key", () => {
      this.sql(
        "UPDATE pool_keys SET revoked_at = ? WHERE id = ? AND pool_id = ? AND revoked_at IS NULL",
      ).run(at, keyId, poolId);
      return this.getPoolKey(poolId, keyId);
    });
  }

  /** Forgets the prepared statements (the database is closing). */
  clear(): void {
    this.statements.clear();
  }

  /** Prepared statements are cached: preparing costs far more than running. */
  private sql(source: string): Statement {
    return this.statements.get(source);
  }

  /**
   * A check-then-write in one IMMEDIATE transaction (the write lock is taken before the
   * check, so another process cannot slip in between), counted as a local change.
   */
  write<T>(what: string, body: () => T): T {
    const result = guardedWrite(what, () => this.database.transaction(body).immediate());
    this.marker.noteLocalWrite();
    return result;
  }

  private requireTeam(teamId: number): void {
    if (!this.getTeam(teamId)) throw new InvalidArgumentError("Unknown team.");
  }
}
