import { UnitGate } from "../util/unit-gate.js";
import type { CatalogStore } from "./types.js";

/** The catalog operations (everything but units, the change marker and closing). */
export type CatalogOperations = Omit<CatalogStore, "atomically" | "changeMarker" | "close">;

/** {@link CatalogOperations} answered synchronously: a store in this process (memory, SQLite). */
export type SynchronousCatalogOperations = {
  [K in keyof CatalogOperations]: (
    ...args: Parameters<CatalogOperations[K]>
  ) => Awaited<ReturnType<CatalogOperations[K]>>;
};

/**
 * A {@link CatalogStore} over synchronous tables in this process. Each call runs its tables
 * call whole (nothing interleaves with synchronous code), after waiting for an open unit:
 * a unit (`atomically`) awaits between its calls, and a call from elsewhere in the process
 * must not land inside it. Only the unit's own handle (`tx`) passes the gate.
 *
 * @example
 * ```ts
 * class MyStore extends SynchronousCatalogStore {
 *   constructor() { super(new MyTables()); }
 *   protected runUnit<T>(body: (tx: CatalogStore) => Promise<T>) { return body(this.unitHandle()); }
 *   async changeMarker() { return 0; }
 *   async close() {}
 * }
 * ```
 */
export abstract class SynchronousCatalogStore implements CatalogStore {
  protected constructor(
    protected readonly tables: SynchronousCatalogOperations,
    protected readonly gate: UnitGate = new UnitGate(),
    /** True on a unit's handle: its calls are the unit's own and pass the gate. */
    private readonly insideUnit: boolean = false,
  ) {}

  createTeam(...args: Parameters<CatalogStore["createTeam"]>) {
    return this.call(() => this.tables.createTeam(...args));
  }

  findTeamBySlug(...args: Parameters<CatalogStore["findTeamBySlug"]>) {
    return this.call(() => this.tables.findTeamBySlug(...args));
  }

  getTeam(...args: Parameters<CatalogStore["getTeam"]>) {
    return this.call(() => this.tables.getTeam(...args));
  }

  listTeams(...args: Parameters<CatalogStore["listTeams"]>) {
    return this.call(() => this.tables.listTeams(...args));
  }

  createUser(...args: Parameters<CatalogStore["createUser"]>) {
    return this.call(() => this.tables.createUser(...args));
  }

  findUserByEmail(...args: Parameters<CatalogStore["findUserByEmail"]>) {
    return this.call(() => this.tables.findUserByEmail(...args));
  }

  getUser(...args: Parameters<CatalogStore["getUser"]>) {
    return this.call(() => this.tables.getUser(...args));
  }

  setMembership(...args: Parameters<CatalogStore["setMembership"]>) {
    return this.call(() => this.tables.setMembership(...args));
  }

  getMembership(...args: Parameters<CatalogStore["getMembership"]>) {
    return this.call(() => this.tables.getMembership(...args));
  }

  listMemberships(...args: Parameters<CatalogStore["listMemberships"]>) {
    return this.call(() => this.tables.listMemberships(...args));
  }

  listUserMemberships(...args: Parameters<CatalogStore["listUserMemberships"]>) {
    return this.call(() => this.tables.listUserMemberships(...args));
  }

  removeMembership(...args: Parameters<CatalogStore["removeMembership"]>) {
    return this.call(() => this.tables.removeMembership(...args));
  }

  insertApiToken(...args: Parameters<CatalogStore["insertApiToken"]>) {
    return this.call(() => this.tables.insertApiToken(...args));
  }

  findApiTokenByHash(...args: Parameters<CatalogStore["findApiTokenByHash"]>) {
    return this.call(() => this.tables.findApiTokenByHash(...args));
  }

  listApiTokens(...args: Parameters<CatalogStore["listApiTokens"]>) {
    return this.call(() => this.tables.listApiTokens(...args));
  }

  revokeApiToken(...args: Parameters<CatalogStore["revokeApiToken"]>) {
    return this.call(() => this.tables.revokeApiToken(...args));
  }

  touchApiToken(...args: Parameters<CatalogStore["touchApiToken"]>) {
    return this.call(() => this.tables.touchApiToken(...args));
  }

  upsertBudget(...args: Parameters<CatalogStore["upsertBudget"]>) {
    return this.call(() => this.tables.upsertBudget(...args));
  }

  getBudget(...args: Parameters<CatalogStore["getBudget"]>) {
    return this.call(() => this.tables.getBudget(...args));
  }

  listBudgets(...args: Parameters<CatalogStore["listBudgets"]>) {
    return this.call(() => this.tables.listBudgets(...args));
  }

  renameBudget(...args: Parameters<CatalogStore["renameBudget"]>) {
    return this.call(() => this.tables.renameBudget(...args));
  }

  deleteBudget(...args: Parameters<CatalogStore["deleteBudget"]>) {
    return this.call(() => this.tables.deleteBudget(...args));
  }

  upsertPool(...args: Parameters<CatalogStore["upsertPool"]>) {
    return this.call(() => this.tables.upsertPool(...args));
  }

  getPoolBySubdomain(...args: Parameters<CatalogStore["getPoolBySubdomain"]>) {
    return this.call(() => this.tables.getPoolBySubdomain(...args));
  }

  findPoolBySubdomain(...args: Parameters<CatalogStore["findPoolBySubdomain"]>) {
    return this.call(() => this.tables.findPoolBySubdomain(...args));
  }

  listPools(...args: Parameters<CatalogStore["listPools"]>) {
    return this.call(() => this.tables.listPools(...args));
  }

  listAllPools(...args: Parameters<CatalogStore["listAllPools"]>) {
    return this.call(() => this.tables.listAllPools(...args));
  }

  listAllBudgets(...args: Parameters<CatalogStore["listAllBudgets"]>) {
    return this.call(() => this.tables.listAllBudgets(...args));
  }

  deletePool(...args: Parameters<CatalogStore["deletePool"]>) {
    return this.call(() => this.tables.deletePool(...args));
  }

  insertPoolKey(...args: Parameters<CatalogStore["insertPoolKey"]>) {
    return this.call(() => this.tables.insertPoolKey(...args));
  }

  getPoolKey(...args: Parameters<CatalogStore["getPoolKey"]>) {
    return this.call(() => this.tables.getPoolKey(...args));
  }

  findPoolKeyByHash(...args: Parameters<CatalogStore["findPoolKeyByHash"]>) {
    return this.call(() => this.tables.findPoolKeyByHash(...args));
  }

  listPoolKeys(...args: Parameters<CatalogStore["listPoolKeys"]>) {
    return this.call(() => this.tables.listPoolKeys(...args));
  }

  revokePoolKey(...args: Parameters<CatalogStore["revokePoolKey"]>) {
    return this.call(() => this.tables.revokePoolKey(...args));
  }

  atomically<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T> {
    // A unit inside a unit is part of it: the outer one commits or rolls back the whole.
    if (this.insideUnit) return body(this);
    return this.gate.exclusive(() => this.runUnit(body));
  }

  abstract changeMarker(): Promise<number>;
  abstract close(): Promise<void>;

  /** Runs `body` with {@link SynchronousCatalogStore.unitHandle} as one unit: begin, commit, roll back on a throw. */
  protected abstract runUnit<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T>;

  /** A handle on the same tables whose calls pass the gate: the unit's body gets it. */
  protected unitHandle(): CatalogStore {
    return new UnitHandle(this.tables, this.gate, this);
  }

  private async call<T>(operation: () => T): Promise<T> {
    if (!this.insideUnit) await this.gate.idle();
    return operation();
  }
}

class UnitHandle extends SynchronousCatalogStore {
  constructor(
    tables: SynchronousCatalogOperations,
    gate: UnitGate,
    private readonly owner: CatalogStore,
  ) {
    super(tables, gate, true);
  }

  protected runUnit<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T> {
    return body(this);
  }

  changeMarker(): Promise<number> {
    return this.owner.changeMarker();
  }

  async close(): Promise<void> {
    throw new Error("A unit's handle cannot close the store.");
  }
}
