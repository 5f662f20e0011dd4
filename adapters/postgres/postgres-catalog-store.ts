import type pg from "pg";
import { budgetInUse, budgetNameTaken } from "../../src/catalog/budget-in-use.js";
import type {
  ApiTokenRecord,
  BudgetRecord,
  CatalogStore,
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
  type PoolKeyRow,
  type PoolRow,
  poolFromRow,
  poolKeyFromRow,
  poolKeyParams,
  poolParams,
} from "../sqlite/catalog-rows.js";
import type { PostgresChangeWatch } from "./change-watch.js";
import { type Queryable, withTransaction } from "./connect.js";
import { translated } from "./postgres-errors.js";

/** What every handle of one store shares: the pool, the clock and the change watch. */
interface Shared {
  pool: pg.Pool;
  clock: Clock;
  watch: PostgresChangeWatch;
  /** Ends the pool and the watch (the store owns them). */
  close: () => Promise<void>;
}

/** `INSERT INTO table (…) VALUES ($1, …) RETURNING *` for a row object. */
function insertRow(table: string, row: Record<string, unknown>): [string, unknown[]] {
  const columns = Object.keys(row);
  const places = columns.map((_, index) => `$${index + 1}`);
  return [
    `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${places.join(", ")}) RETURNING *`,
    Object.values(row),
  ];
}

/**
 * The {@link CatalogStore} on PostgreSQL (node-postgres), shared by a fleet of servers.
 * Checked writes run in a transaction on one connection (unique constraints back the checks
 * up against another server writing at once); a unit (`atomically`) is BEGIN … COMMIT on one
 * connection, given to its body as `tx`, while other calls use other connections. The change
 * marker is the catalog version as LISTEN/NOTIFY (and a periodic read) report it: no I/O.
 * Open it with `openPostgresCatalog`.
 *
 * @example
 * ```ts
 * const { store } = await openPostgresCatalog({ url: process.env.SLUICE_DATABASE_URL! });
 * const team = await store.createTeam({ name: "Acme", slug: "acme" });
 * ```
 */
export class PostgresCatalogStore implements CatalogStore {
  /** @internal Use `openPostgresCatalog`. */
  constructor(
    private readonly shared: Shared,
    private readonly db: Queryable = shared.pool,
    private readonly insideUnit = false,
  ) {}

  createTeam(input: { name: string; slug: string }): Promise<TeamRecord> {
    return this.write("team", async (q) => {
      if (await this.one(q, "SELECT id FROM teams WHERE slug = $1", [input.slug])) {
        throw new ConflictError(`The team slug "${input.slug}" is taken.`);
      }
      return (await this.one<TeamRecord>(
        q,
        "INSERT INTO teams (name, slug) VALUES ($1, $2) RETURNING id, name, slug",
        [input.name, input.slug],
      ))!;
    });
  }

  findTeamBySlug(slug: string): Promise<TeamRecord | undefined> {
    return this.read("SELECT id, name, slug FROM teams WHERE slug = $1", [slug]);
  }

  getTeam(teamId: number): Promise<TeamRecord | undefined> {
    return this.read("SELECT id, name, slug FROM teams WHERE id = $1", [teamId]);
  }

  listTeams(): Promise<TeamRecord[]> {
    return this.readAll("SELECT id, name, slug FROM teams ORDER BY id", []);
  }

  createUser(input: { name: string; email: string }): Promise<UserRecord> {
    return this.write("user", async (q) => {
      if (await this.one(q, "SELECT id FROM users WHERE email = $1", [input.email])) {
        throw new ConflictError("A user with that email exists.");
      }
      return (await this.one<UserRecord>(
        q,
        "INSERT INTO users (name, email) VALUES ($1, $2) RETURNING id, name, email",
        [input.name, input.email],
      ))!;
    });
  }

  findUserByEmail(email: string): Promise<UserRecord | undefined> {
    return this.read("SELECT id, name, email FROM users WHERE email = $1", [email]);
  }

  getUser(userId: number): Promise<UserRecord | undefined> {
    return this.read("SELECT id, name, email FROM users WHERE id = $1", [userId]);
  }

  async setMembership(membership: MembershipRecord): Promise<void> {
    await this.write("membership", async (q) => {
      await this.requireTeam(q, membership.teamId);
      await this.requireUser(q, membership.userId);
      await q.query(
        `INSERT INTO memberships (team_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role`,
        [membership.teamId, membership.userId, membership.role],
      );
    });
  }

  async getMembership(teamId: number, userId: number): Promise<MembershipRecord | undefined> {
    const row = await this.read<{ role: Role }>(
      "SELECT role FROM memberships WHERE team_id = $1 AND user_id = $2",
      [teamId, userId],
    );
    return row && { teamId, userId, role: row.role };
  }

  async listMemberships(teamId: number): Promise<MembershipRecord[]> {
    const rows = await this.readAll<{ user_id: number; role: Role }>(
      "SELECT user_id, role FROM memberships WHERE team_id = $1 ORDER BY user_id",
      [teamId],
    );
    return rows.map((row) => ({ teamId, userId: row.user_id, role: row.role }));
  }

  async listUserMemberships(userId: number): Promise<MembershipRecord[]> {
    const rows = await this.readAll<{ team_id: number; role: Role }>(
      "SELECT team_id, role FROM memberships WHERE user_id = $1 ORDER BY team_id",
      [userId],
    );
    return rows.map((row) => ({ teamId: row.team_id, userId, role: row.role }));
  }

  removeMembership(teamId: number, userId: number): Promise<boolean> {
    return this.write("membership", async (q) => {
      const result = await q.query("DELETE FROM memberships WHERE team_id = $1 AND user_id = $2", [
        teamId,
        userId,
      ]);
      return result.rowCount === 1;
    });
  }

  insertApiToken(input: Omit<ApiTokenRecord, "id">): Promise<ApiTokenRecord> {
    return this.write("API token", async (q) => {
      await this.requireTeam(q, input.teamId);
      await this.requireUser(q, input.userId);
      const [sql, values] = insertRow("api_tokens", { ...apiTokenParams(input) });
      return apiTokenFromRow((await this.one<ApiTokenRow>(q, sql, values))!);
    });
  }

  async findApiTokenByHash(tokenHash: string): Promise<ApiTokenRecord | undefined> {
    const row = await this.read<ApiTokenRow>("SELECT * FROM api_tokens WHERE token_hash = $1", [
      tokenHash,
    ]);
    return row && apiTokenFromRow(row);
  }

  async listApiTokens(teamId: number): Promise<ApiTokenRecord[]> {
    const rows = await this.readAll<ApiTokenRow>(
      "SELECT * FROM api_tokens WHERE team_id = $1 ORDER BY id",
      [teamId],
    );
    return rows.map(apiTokenFromRow);
  }

  revokeApiToken(teamId: number, tokenId: number, at: number): Promise<ApiTokenRecord | undefined> {
    return this.write("API token", async (q) => {
      await q.query(
        "UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND team_id = $3 AND revoked_at IS NULL",
        [at, tokenId, teamId],
      );
      const row = await this.one<ApiTokenRow>(
        q,
        "SELECT * FROM api_tokens WHERE id = $1 AND team_id = $2",
        [tokenId, teamId],
      );
      return row && apiTokenFromRow(row);
    });
  }

  async touchApiToken(tokenId: number, at: number): Promise<void> {
    // Not a catalog change: no trigger fires on last_used_at alone.
    await this.run("API token", "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2", [
      at,
      tokenId,
    ]);
  }

  upsertBudget(
    teamId: number,
    input: { name: string; originMaxConcurrent: number | null },
  ): Promise<BudgetRecord> {
    return this.write("budget", async (q) => {
      await this.requireTeam(q, teamId);
      const row = await this.one<BudgetRow>(
        q,
        `INSERT INTO budgets (team_id, name, origin_max_concurrent) VALUES ($1, $2, $3)
         ON CONFLICT (team_id, name) DO UPDATE SET origin_max_concurrent = excluded.origin_max_concurrent
         RETURNING *`,
        [teamId, input.name, input.originMaxConcurrent],
      );
      return budgetFromRow(row!);
    });
  }

  async getBudget(teamId: number, budgetId: number): Promise<BudgetRecord | undefined> {
    const row = await this.read<BudgetRow>("SELECT * FROM budgets WHERE id = $1 AND team_id = $2", [
      budgetId,
      teamId,
    ]);
    return row && budgetFromRow(row);
  }

  async listBudgets(teamId: number): Promise<BudgetRecord[]> {
    const rows = await this.readAll<BudgetRow>(
      "SELECT * FROM budgets WHERE team_id = $1 ORDER BY id",
      [teamId],
    );
    return rows.map(budgetFromRow);
  }

  renameBudget(teamId: number, budgetId: number, name: string): Promise<BudgetRecord | undefined> {
    return this.write("budget", async (q) => {
      const budget = await this.one<BudgetRow>(
        q,
        "SELECT * FROM budgets WHERE id = $1 AND team_id = $2 FOR UPDATE",
        [budgetId, teamId],
      );
      if (!budget || budget.name === name) return budget && budgetFromRow(budget);
      if (
        await this.one(q, "SELECT 1 FROM budgets WHERE team_id = $1 AND name = $2", [teamId, name])
      ) {
        throw budgetNameTaken(name);
      }
      const row = await this.one<BudgetRow>(
        q,
        "UPDATE budgets SET name = $1 WHERE id = $2 RETURNING *",
        [name, budgetId],
      );
      return budgetFromRow(row!);
    });
  }

  deleteBudget(teamId: number, budgetId: number): Promise<boolean> {
    return this.write("budget", async (q) => {
      const budget = await this.one<BudgetRow>(
        q,
        "SELECT * FROM budgets WHERE id = $1 AND team_id = $2 FOR UPDATE",
        [budgetId, teamId],
      );
      if (!budget) return false;
      const members = await q.query<{ subdomain: string }>(
        "SELECT subdomain FROM pools WHERE budget_id = $1 ORDER BY id",
        [budgetId],
      );
      if (members.rows.length > 0) {
        throw budgetInUse(
          budget.name,
          members.rows.map((pool) => pool.subdomain),
        );
      }
      await q.query("DELETE FROM budgets WHERE id = $1", [budgetId]);
      return true;
    });
  }

  upsertPool(teamId: number, input: PoolInput): Promise<PoolRecord> {
    return this.write("pool", async (q) => {
      await this.requireTeam(q, teamId);
      if (
        input.budgetId !== null &&
        !(await this.one(q, "SELECT 1 FROM budgets WHERE id = $1 AND team_id = $2", [
          input.budgetId,
          teamId,
        ]))
      ) {
        throw new InvalidArgumentError("The budget is not one of the team's budgets.");
      }
      const existing = await this.one<PoolRow>(
        q,
        "SELECT * FROM pools WHERE subdomain = $1 FOR UPDATE",
        [input.subdomain],
      );
      if (existing && existing.team_id !== teamId) {
        throw new ConflictError(`The subdomain "${input.subdomain}" is taken.`);
      }
      const params = poolParams(teamId, input, this.shared.clock.now());
      if (!existing) {
        const [sql, values] = insertRow("pools", { ...params, created_at: params.updated_at });
        return poolFromRow((await this.one<PoolRow>(q, sql, values))!);
      }
      const columns = Object.keys(params);
      const row = await this.one<PoolRow>(
        q,
        `UPDATE pools SET ${columns.map((column, index) => `${column} = $${index + 1}`).join(", ")}
         WHERE id = $${columns.length + 1} RETURNING *`,
        [...Object.values(params), existing.id],
      );
      return poolFromRow(row!);
    });
  }

  async getPoolBySubdomain(teamId: number, subdomain: string): Promise<PoolRecord | undefined> {
    const row = await this.read<PoolRow>(
      "SELECT * FROM pools WHERE subdomain = $1 AND team_id = $2",
      [subdomain, teamId],
    );
    return row && poolFromRow(row);
  }

  async findPoolBySubdomain(subdomain: string): Promise<PoolRecord | undefined> {
    const row = await this.read<PoolRow>("SELECT * FROM pools WHERE subdomain = $1", [subdomain]);
    return row && poolFromRow(row);
  }

  async listPools(teamId: number): Promise<PoolRecord[]> {
    const rows = await this.readAll<PoolRow>("SELECT * FROM pools WHERE team_id = $1 ORDER BY id", [
      teamId,
    ]);
    return rows.map(poolFromRow);
  }

  async listAllPools(): Promise<PoolRecord[]> {
    return (await this.readAll<PoolRow>("SELECT * FROM pools ORDER BY id", [])).map(poolFromRow);
  }

  async listAllBudgets(): Promise<BudgetRecord[]> {
    const rows = await this.readAll<BudgetRow>("SELECT * FROM budgets ORDER BY id", []);
    return rows.map(budgetFromRow);
  }

  /** Deletes the pool, its keys, and its metrics and access log (keyed by subdomain), at once. */
  deletePool(teamId: number, poolId: number): Promise<boolean> {
    return this.write("pool", async (q) => {
      const row = await this.one<{ subdomain: string }>(
        q,
        "DELETE FROM pools WHERE id = $1 AND team_id = $2 RETURNING subdomain",
        [poolId, teamId],
      );
      if (!row) return false;
      await q.query("DELETE FROM metrics_buckets WHERE pool = $1", [row.subdomain]);
      await q.query("DELETE FROM access_log WHERE pool = $1", [row.subdomain]);
      return true;
    });
  }

  insertPoolKey(input: Omit<PoolKeyRecord, "id">): Promise<PoolKeyRecord> {
    return this.write("pool key", async (q) => {
      if (!(await this.one(q, "SELECT 1 FROM pools WHERE id = $1", [input.poolId]))) {
        throw new InvalidArgumentError("Unknown pool.");
      }
      const [sql, values] = insertRow("pool_keys", { ...poolKeyParams(input) });
      return poolKeyFromRow((await this.one<PoolKeyRow>(q, sql, values))!);
    });
  }

  async getPoolKey(poolId: number, keyId: number): Promise<PoolKeyRecord | undefined> {
    const row = await this.read<PoolKeyRow>(
      "SELECT * FROM pool_keys WHERE id = $1 AND pool_id = $2",
      [keyId, poolId],
    );
    return row && poolKeyFromRow(row);
  }

  async findPoolKeyByHash(keyHash: string): Promise<PoolKeyRecord | undefined> {
    const row = await this.read<PoolKeyRow>("SELECT * FROM pool_keys WHERE key_hash = $1", [
      keyHash,
    ]);
    return row && poolKeyFromRow(row);
  }

  async listPoolKeys(poolId: number): Promise<PoolKeyRecord[]> {
    const rows = await this.readAll<PoolKeyRow>(
      "SELECT * FROM pool_keys WHERE pool_id = $1 ORDER BY id",
      [poolId],
    );
    return rows.map(poolKeyFromRow);
  }

  revokePoolKey(poolId: number, keyId: number, at: number): Promise<PoolKeyRecord | undefined> {
    return this.write("pool key", async (q) => {
      await q.query(
        "UPDATE pool_keys SET revoked_at = $1 WHERE id = $2 AND pool_id = $3 AND revoked_at IS NULL",
        [at, keyId, poolId],
      );
      const row = await this.one<PoolKeyRow>(
        q,
        "SELECT * FROM pool_keys WHERE id = $1 AND pool_id = $2",
        [keyId, poolId],
      );
      return row && poolKeyFromRow(row);
    });
  }

  atomically<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T> {
    if (this.insideUnit) return body(this);
    // Repeatable read: a unit reads, checks, then writes (a form's version check). Under read
    // committed, two units could both pass the check and the later write win unseen; here the
    // second to write a row another unit changed since it began fails (a ConflictError).
    return this.transaction(
      "catalog",
      (client) => body(new PostgresCatalogStore(this.shared, client, true)),
      "repeatable read",
    );
  }

  async changeMarker(): Promise<number> {
    return this.shared.watch.version;
  }

  async close(): Promise<void> {
    if (this.insideUnit) throw new Error("A unit's handle cannot close the store.");
    await this.shared.close();
  }

  /** A checked write: in the open unit, or in a transaction of its own. */
  private write<T>(what: string, body: (q: Queryable) => Promise<T>): Promise<T> {
    if (this.insideUnit) return translated(what, () => body(this.db));
    return this.transaction(what, body);
  }

  private async transaction<T>(
    what: string,
    body: (q: pg.PoolClient) => Promise<T>,
    isolation?: "repeatable read",
  ): Promise<T> {
    const result = await translated(what, () => withTransaction(this.shared.pool, body, isolation));
    // This server's own change shows in its marker at once, not only when the NOTIFY arrives.
    await this.shared.watch.refresh().catch(() => {});
    return result;
  }

  private async run(what: string, sql: string, values: unknown[]): Promise<void> {
    await translated(what, () => this.db.query(sql, values));
  }

  private async read<R extends object>(sql: string, values: unknown[]): Promise<R | undefined> {
    return this.one<R>(this.db, sql, values);
  }

  private async readAll<R extends object>(sql: string, values: unknown[]): Promise<R[]> {
    const result = await translated("catalog", () => this.db.query<R>(sql, values));
    return result.rows;
  }

  private async one<R extends object>(
    q: Queryable,
    sql: string,
    values: unknown[],
  ): Promise<R | undefined> {
    const result = await translated("catalog", () => q.query<R>(sql, values));
    return result.rows[0];
  }

  private async requireTeam(q: Queryable, teamId: number): Promise<void> {
    if (!(await this.one(q, "SELECT 1 FROM teams WHERE id = $1", [teamId]))) {
      throw new InvalidArgumentError("Unknown team.");
    }
  }

  private async requireUser(q: Queryable, userId: number): Promise<void> {
    if (!(await this.one(q, "SELECT 1 FROM users WHERE id = $1", [userId]))) {
      throw new InvalidArgumentError("Unknown user.");
    }
  }
}

/** @internal */
export type PostgresCatalogShared = Shared;
