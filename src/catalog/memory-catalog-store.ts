import { type Clock, systemClock } from "../clock/clock.js";
import { ConflictError, InvalidArgumentError } from "../errors.js";
import { budgetInUse, budgetNameTaken } from "./budget-in-use.js";
import { copyApiToken, copyPoolFields, copyPoolKey } from "./record-copies.js";
import {
  type SynchronousCatalogOperations,
  SynchronousCatalogStore,
} from "./synchronous-catalog-store.js";
import type {
  ApiTokenRecord,
  BudgetRecord,
  CatalogStore,
  MembershipRecord,
  PoolInput,
  PoolKeyRecord,
  PoolRecord,
  TeamRecord,
  UserRecord,
} from "./types.js";

/**
 * The reference {@link CatalogStore}: plain maps, no I/O. Records go in and come out as
 * copies, so callers never share state with the store. A unit that throws leaves the maps as
 * they were before it. For tests, examples and single-process setups without persistence.
 *
 * @example
 * ```ts
 * const store = new MemoryCatalogStore({ clock: new ManualClock() });
 * const team = await store.createTeam({ name: "Acme", slug: "acme" });
 * ```
 */
export class MemoryCatalogStore extends SynchronousCatalogStore {
  private readonly memory: MemoryCatalogTables;

  constructor(options: { clock?: Clock } = {}) {
    const memory = new MemoryCatalogTables(options.clock ?? systemClock);
    super(memory);
    this.memory = memory;
  }

  protected async runUnit<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T> {
    const before = this.memory.snapshot();
    try {
      return await body(this.unitHandle());
    } catch (error) {
      this.memory.restore(before);
      throw error;
    }
  }

  async changeMarker(): Promise<number> {
    return this.memory.changes;
  }

  async close(): Promise<void> {}
}

/** The maps behind {@link MemoryCatalogStore}, answered synchronously. */
class MemoryCatalogTables implements SynchronousCatalogOperations {
  private teams = new Map<number, TeamRecord>();
  private users = new Map<number, UserRecord>();
  private memberships = new Map<string, MembershipRecord>();
  private tokens = new Map<number, ApiTokenRecord>();
  private tokenIdByHash = new Map<string, number>();
  private budgets = new Map<number, BudgetRecord>();
  private pools = new Map<number, PoolRecord>();
  private poolIdBySubdomain = new Map<string, number>();
  private keys = new Map<number, PoolKeyRecord>();
  private keyIdByHash = new Map<string, number>();
  private lastId = 0;
  /** Counts changes: the store's change marker. */
  changes = 0;

  constructor(private readonly clock: Clock) {}

  /** A deep copy of every map, for {@link MemoryCatalogTables.restore}. */
  snapshot(): object {
    return structuredClone({
      teams: this.teams,
      users: this.users,
      memberships: this.memberships,
      tokens: this.tokens,
      tokenIdByHash: this.tokenIdByHash,
      budgets: this.budgets,
      pools: this.pools,
      poolIdBySubdomain: this.poolIdBySubdomain,
      keys: this.keys,
      keyIdByHash: this.keyIdByHash,
      lastId: this.lastId,
    });
  }

  /** Puts back what {@link MemoryCatalogTables.snapshot} took (the change count only grows). */
  restore(state: object): void {
    Object.assign(this, state);
    this.changes += 1;
  }

  createTeam(input: { name: string; slug: string }): TeamRecord {
    if (this.findTeamBySlug(input.slug)) {
      throw new ConflictError(`The team slug "${input.slug}" is taken.`);
    }
    const team = { id: this.nextId(), name: input.name, slug: input.slug };
    this.teams.set(team.id, team);
    return { ...this.changed(team) };
  }

  findTeamBySlug(slug: string): TeamRecord | undefined {
    for (const team of this.teams.values()) if (team.slug === slug) return { ...team };
    return undefined;
  }

  getTeam(teamId: number): TeamRecord | undefined {
    const team = this.teams.get(teamId);
    return team && { ...team };
  }

  listTeams(): TeamRecord[] {
    return [...this.teams.values()].sort((a, b) => a.id - b.id).map((team) => ({ ...team }));
  }

  createUser(input: { name: string; email: string }): UserRecord {
    if (this.findUserByEmail(input.email)) {
      throw new ConflictError("A user with that email exists.");
    }
    const user = { id: this.nextId(), name: input.name, email: input.email };
    this.users.set(user.id, user);
    return { ...this.changed(user) };
  }

  findUserByEmail(email: string): UserRecord | undefined {
    for (const user of this.users.values()) if (user.email === email) return { ...user };
    return undefined;
  }

  getUser(userId: number): UserRecord | undefined {
    const user = this.users.get(userId);
    return user && { ...user };
  }

  setMembership(membership: MembershipRecord): void {
    this.requireTeam(membership.teamId);
    if (!this.users.has(membership.userId)) throw new InvalidArgumentError("Unknown user.");
    this.memberships.set(membershipKey(membership.teamId, membership.userId), { ...membership });
    this.changed(membership);
  }

  getMembership(teamId: number, userId: number): MembershipRecord | undefined {
    const membership = this.memberships.get(membershipKey(teamId, userId));
    return membership && { ...membership };
  }

  listMemberships(teamId: number): MembershipRecord[] {
    return [...this.memberships.values()]
      .filter((membership) => membership.teamId === teamId)
      .sort((a, b) => a.userId - b.userId)
      .map((membership) => ({ ...membership }));
  }

  listUserMemberships(userId: number): MembershipRecord[] {
    return [...this.memberships.values()]
      .filter((membership) => membership.userId === userId)
      .sort((a, b) => a.teamId - b.teamId)
      .map((membership) => ({ ...membership }));
  }

  removeMembership(teamId: number, userId: number): boolean {
    const removed = this.memberships.delete(membershipKey(teamId, userId));
    if (removed) this.changed(null);
    return removed;
  }

  insertApiToken(input: Omit<ApiTokenRecord, "id">): ApiTokenRecord {
    this.requireTeam(input.teamId);
    if (!this.users.has(input.userId)) throw new InvalidArgumentError("Unknown user.");
    if (this.tokenIdByHash.has(input.tokenHash)) throw new ConflictError("Duplicate token hash.");
    const token = copyApiToken({ ...input, id: this.nextId() });
    this.tokens.set(token.id, token);
    this.tokenIdByHash.set(token.tokenHash, token.id);
    return copyApiToken(this.changed(token));
  }

  findApiTokenByHash(tokenHash: string): ApiTokenRecord | undefined {
    const id = this.tokenIdByHash.get(tokenHash);
    const token = id === undefined ? undefined : this.tokens.get(id);
    return token && copyApiToken(token);
  }

  listApiTokens(teamId: number): ApiTokenRecord[] {
    return [...this.tokens.values()].filter((t) => t.teamId === teamId).map(copyApiToken);
  }

  revokeApiToken(teamId: number, tokenId: number, at: number): ApiTokenRecord | undefined {
    const token = this.tokens.get(tokenId);
    if (!token || token.teamId !== teamId) return undefined;
    if (token.revokedAt === null) {
      token.revokedAt = at;
      this.changed(token);
    }
    return copyApiToken(token);
  }

  touchApiToken(tokenId: number, at: number): void {
    const token = this.tokens.get(tokenId);
    // Not counted as a change: use timestamps mean nothing to anyone syncing the catalog.
    if (token) token.lastUsedAt = at;
  }

  upsertBudget(
    teamId: number,
    input: { name: string; originMaxConcurrent: number | null },
  ): BudgetRecord {
    this.requireTeam(teamId);
    let budget = [...this.budgets.values()].find(
      (b) => b.teamId === teamId && b.name === input.name,
    );
    if (budget) budget.originMaxConcurrent = input.originMaxConcurrent;
    else {
      budget = { id: this.nextId(), teamId, ...input };
      this.budgets.set(budget.id, budget);
    }
    return { ...this.changed(budget) };
  }

  getBudget(teamId: number, budgetId: number): BudgetRecord | undefined {
    const budget = this.budgets.get(budgetId);
    return budget && budget.teamId === teamId ? { ...budget } : undefined;
  }

  listBudgets(teamId: number): BudgetRecord[] {
    return this.listAllBudgets().filter((budget) => budget.teamId === teamId);
  }

  renameBudget(teamId: number, budgetId: number, name: string): BudgetRecord | undefined {
    const budget = this.budgets.get(budgetId);
    if (!budget || budget.teamId !== teamId) return undefined;
    if (budget.name === name) return { ...budget };
    if ([...this.budgets.values()].some((b) => b.teamId === teamId && b.name === name)) {
      throw budgetNameTaken(name);
    }
    budget.name = name;
    return { ...this.changed(budget) };
  }

  deleteBudget(teamId: number, budgetId: number): boolean {
    const budget = this.budgets.get(budgetId);
    if (!budget || budget.teamId !== teamId) return false;
    const members = [...this.pools.values()].filter((pool) => pool.budgetId === budgetId);
    if (members.length > 0) {
      throw budgetInUse(
        budget.name,
        members.map((pool) => pool.subdomain),
      );
    }
    this.budgets.delete(budgetId);
    this.changed(budget);
    return true;
  }

  listAllBudgets(): BudgetRecord[] {
    return [...this.budgets.values()].map((budget) => ({ ...budget }));
  }

  upsertPool(teamId: number, input: PoolInput): PoolRecord {
    this.requireTeam(teamId);
    if (input.budgetId !== null && !this.getBudget(teamId, input.budgetId)) {
      throw new InvalidArgumentError("The budget is not one of the team's budgets.");
    }
    const existingId = this.poolIdBySubdomain.get(input.subdomain);
    const existing = existingId === undefined ? undefined : this.pools.get(existingId);
    if (existing && existing.teamId !== teamId) {
      throw new ConflictError(`The subdomain "${input.subdomain}" is taken.`);
    }
    const now = this.clock.now();
    const pool: PoolRecord = copyPoolFields({
      ...input,
      id: existing?.id ?? this.nextId(),
      teamId,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    });
    this.pools.set(pool.id, pool);
    this.poolIdBySubdomain.set(pool.subdomain, pool.id);
    return copyPoolFields(this.changed(pool));
  }

  getPoolBySubdomain(teamId: number, subdomain: string): PoolRecord | undefined {
    const pool = this.findPoolBySubdomain(subdomain);
    return pool && pool.teamId === teamId ? pool : undefined;
  }

  findPoolBySubdomain(subdomain: string): PoolRecord | undefined {
    const id = this.poolIdBySubdomain.get(subdomain);
    const pool = id === undefined ? undefined : this.pools.get(id);
    return pool && copyPoolFields(pool);
  }

  listPools(teamId: number): PoolRecord[] {
    return this.listAllPools().filter((pool) => pool.teamId === teamId);
  }

  listAllPools(): PoolRecord[] {
    return [...this.pools.values()].map(copyPoolFields);
  }

  deletePool(teamId: number, poolId: number): boolean {
    const pool = this.pools.get(poolId);
    if (!pool || pool.teamId !== teamId) return false;
    this.pools.delete(poolId);
    this.poolIdBySubdomain.delete(pool.subdomain);
    for (const key of [...this.keys.values()]) {
      if (key.poolId !== poolId) continue;
      this.keys.delete(key.id);
      this.keyIdByHash.delete(key.keyHash);
    }
    this.changed(pool);
    return true;
  }

  insertPoolKey(input: Omit<PoolKeyRecord, "id">): PoolKeyRecord {
    if (!this.pools.has(input.poolId)) throw new InvalidArgumentError("Unknown pool.");
    if (this.keyIdByHash.has(input.keyHash)) throw new ConflictError("Duplicate key hash.");
    const key = copyPoolKey({ ...input, id: this.nextId() });
    this.keys.set(key.id, key);
    this.keyIdByHash.set(key.keyHash, key.id);
    return copyPoolKey(this.changed(key));
  }

  getPoolKey(poolId: number, keyId: number): PoolKeyRecord | undefined {
    const key = this.keys.get(keyId);
    return key && key.poolId === poolId ? copyPoolKey(key) : undefined;
  }

  findPoolKeyByHash(keyHash: string): PoolKeyRecord | undefined {
    const id = this.keyIdByHash.get(keyHash);
    const key = id === undefined ? undefined : this.keys.get(id);
    return key && copyPoolKey(key);
  }

  listPoolKeys(poolId: number): PoolKeyRecord[] {
    return [...this.keys.values()].filter((key) => key.poolId === poolId).map(copyPoolKey);
  }

  revokePoolKey(poolId: number, keyId: number, at: number): PoolKeyRecord | undefined {
    const key = this.keys.get(keyId);
    if (!key || key.poolId !== poolId) return undefined;
    if (key.revokedAt === null) {
      key.revokedAt = at;
      this.changed(key);
    }
    return copyPoolKey(key);
  }

  /** Ids are unique across record kinds: harmless, and a mixed-up id never finds a row. */
  private nextId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  private changed<T>(record: T): T {
    this.changes += 1;
    return record;
  }

  private requireTeam(teamId: number): void {
    if (!this.teams.has(teamId)) throw new InvalidArgumentError("Unknown team.");
  }
}

function membershipKey(teamId: number, userId: number): string {
  return `${teamId}:${userId}`;
}
