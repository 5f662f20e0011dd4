import {
  budgetToGovernorSettings,
  governorBudgetId,
  poolToGovernorSettings,
} from "../../src/catalog/governor-mapping.js";
import type { BudgetRecord, CatalogStore, PoolRecord } from "../../src/catalog/types.js";
import type { Clock, TimerHandle } from "../../src/clock/clock.js";
import { InvalidArgumentError } from "../../src/errors.js";
import type { Governor } from "../../src/governor/types.js";
import { countNoun } from "./count-noun.js";

/** What one sync changed in the governor (names are pool subdomains and budget ids). */
export interface SyncReport {
  definedPools: string[];
  updatedPools: string[];
  removedPools: string[];
  definedBudgets: string[];
  updatedBudgets: string[];
  removedBudgets: string[];
  /** The catalog name of each budget id above, for people reading the log. */
  budgetNames: Record<string, string>;
}

/** Keeps a governor's pools and budgets equal to the catalog's. */
export interface CatalogSync {
  /** Applies the whole catalog now (also when the change marker did not move). */
  syncNow(): Promise<SyncReport>;
  /** Applies the catalog when its change marker moved since the last sync; null when it did not. */
  syncIfChanged(): Promise<SyncReport | null>;
  /** Checks the change marker every `intervalMs` until {@link CatalogSync.stop}. */
  start(intervalMs: number): void;
  /**
   * Checks the change marker now, between timer ticks (a catalog that notifies changes, such
   * as PostgreSQL's, calls it), logging what changed like a tick does.
   */
  nudge(): Promise<void>;
  /** Stops the timer and waits for a sync in progress. */
  stop(): Promise<void>;
  /** Why the last timed sync failed; null when it succeeded (or none ran yet). */
  lastFailure(): string | null;
}

/** Options of {@link createCatalogSync}. */
export interface CatalogSyncOptions {
  store: CatalogStore;
  governor: Governor;
  clock: Clock;
  /** Called with each readable line (changes and failures). */
  log?: (line: string) => void;
  /**
   * Called after a pool left the governor: deleted from the catalog, or its subdomain now
   * names another pool (deleted and re-created, maybe by another team). The server forgets
   * the pool's metrics here, which are keyed by subdomain.
   */
  onPoolRemoved?: (subdomain: string) => void | Promise<void>;
}

function emptyReport(): SyncReport {
  return {
    definedPools: [],
    updatedPools: [],
    removedPools: [],
    definedBudgets: [],
    updatedBudgets: [],
    removedBudgets: [],
    budgetNames: {},
  };
}

/**
 * Mirrors the catalog into the governor: every budget under `String(budget.id)` and every
 * pool under its subdomain. Changed pools are redefined in place, so new limits apply at once
 * and slots already held are kept; pools and budgets gone from the catalog are removed. Only
 * what changed is pushed, which makes a periodic sync cheap when nothing moved. Syncs never
 * overlap: a call made during a sync runs after it.
 *
 * @example
 * ```ts
 * const sync = createCatalogSync({ store: catalog.store, governor, clock: systemClock });
 * await sync.syncNow();
 * sync.start(1_000); // picks up `sluice apply` from another process
 * ```
 */
export function createCatalogSync(options: CatalogSyncOptions): CatalogSync {
  const { store, governor, clock } = options;
  const log = options.log ?? (() => {});
  // Fingerprints of what the governor was last given, to push only changes.
  const appliedPools = new Map<string, string>();
  // Catalog id behind each subdomain the governor knows: a new id is a different pool.
  const appliedPoolIds = new Map<string, number>();
  const appliedBudgets = new Map<string, string>();
  // Catalog name of each applied budget id, kept so a removal can still be named.
  const budgetNames = new Map<string, string>();
  let lastMarker: number | null = null;
  let running: Promise<unknown> = Promise.resolve();
  let timer: TimerHandle | null = null;
  let stopped = true;
  let failure: string | null = null;

  async function removePool(subdomain: string): Promise<void> {
    await governor.removePool(subdomain);
    appliedPools.delete(subdomain);
    appliedPoolIds.delete(subdomain);
    try {
      await options.onPoolRemoved?.(subdomain);
    } catch (error) {
      log(`Could not clean up after pool ${subdomain}: ${(error as Error).message}`);
    }
  }

  /** Pushes one budget when it changed; answers why the governor refused it (null: applied). */
  async function applyBudget(budget: BudgetRecord, report: SyncReport): Promise<string | null> {
    const name = governorBudgetId(budget);
    const settings = budgetToGovernorSettings(budget);
    const fingerprint = JSON.stringify(settings);
    const previous = appliedBudgets.get(name);
    budgetNames.set(name, budget.name);
    if (previous === fingerprint) return null;
    try {
      await governor.defineBudget(name, settings);
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      return error.message;
    }
    appliedBudgets.set(name, fingerprint);
    report.budgetNames[name] = budget.name;
    (previous === undefined ? report.definedBudgets : report.updatedBudgets).push(name);
    return null;
  }

  /**
   * A pool that changes budget or reservation first drops its reservation where it is
   * (a reservation of 0 always fits its budget). Then whatever order the pools take their new
   * places in, no budget is ever over-reserved on the way, even when pools swap budgets or
   * trade reservations: a budget only ever holds final reservations and zeros.
   */
  async function giveUpReservation(
    pool: PoolRecord,
    budgetById: ReadonlyMap<number, BudgetRecord>,
  ): Promise<void> {
    // What the governor runs the pool with now (nothing: the pool is new to it).
    const applied = governor.poolSettings(pool.subdomain);
    const held = applied?.budget;
    if (!applied || !held?.reservedConcurrent) return;
    const wanted = poolToGovernorSettings(pool, budgetOf(pool, budgetById)).budget;
    if (wanted?.id === held.id && wanted.reservedConcurrent === held.reservedConcurrent) return;
    const released = { ...applied, budget: { ...held, reservedConcurrent: 0 } };
    try {
      await governor.definePool(pool.subdomain, released);
    } catch (error) {
      log(
        `Could not release the reservation of pool ${pool.subdomain}: ${(error as Error).message}`,
      );
      return;
    }
    appliedPools.set(pool.subdomain, JSON.stringify(released));
  }

  /** Pushes one pool when it changed; answers why the governor refused it (null: applied). */
  async function applyPool(
    pool: PoolRecord,
    budgetById: ReadonlyMap<number, BudgetRecord>,
    report: SyncReport,
  ): Promise<string | null> {
    const settings = poolToGovernorSettings(pool, budgetOf(pool, budgetById));
    const fingerprint = JSON.stringify(settings);
    const previous = appliedPools.get(pool.subdomain);
    if (previous === fingerprint) return null;
    try {
      await governor.definePool(pool.subdomain, settings);
    } catch (error) {
      return (error as Error).message;
    }
    appliedPools.set(pool.subdomain, fingerprint);
    appliedPoolIds.set(pool.subdomain, pool.id);
    (previous === undefined ? report.definedPools : report.updatedPools).push(pool.subdomain);
    return null;
  }

  async function apply(): Promise<SyncReport> {
    const report = emptyReport();
    lastMarker = await store.changeMarker();
    const budgets = await store.listAllBudgets();
    const pools = await store.listAllPools();
    const budgetById = new Map<number, BudgetRecord>(budgets.map((budget) => [budget.id, budget]));

    // In an order that never breaks a ceiling on the way (each step only lowers what a budget
    // holds, or brings it to its final value): budgets that fit now (new, raised, or lowered
    // above what is reserved); pools gone or replaced, and the reservations pools are moving,
    // let go; every pool in its final place; then the lowered ceilings.
    const deferredBudgets: BudgetRecord[] = [];
    for (const budget of budgets) {
      if ((await applyBudget(budget, report)) !== null) deferredBudgets.push(budget);
    }
    const catalogIds = new Map(pools.map((pool) => [pool.subdomain, pool.id]));
    for (const [name, appliedId] of [...appliedPoolIds]) {
      // A subdomain with a new id is a new pool: neither the old one's slots, queue nor
      // history belong to it.
      if (catalogIds.get(name) === appliedId) continue;
      await removePool(name);
      report.removedPools.push(name);
    }
    for (const pool of pools) await giveUpReservation(pool, budgetById);
    for (const pool of pools) {
      const refused = await applyPool(pool, budgetById, report);
      if (refused !== null) log(`Could not apply pool ${pool.subdomain}: ${refused}`);
    }
    for (const budget of deferredBudgets) {
      const refused = await applyBudget(budget, report);
      if (refused !== null) log(`Could not apply budget ${budget.name}: ${refused}`);
    }

    // Budgets go last: a pool leaving a budget is moved out before the budget disappears.
    const wantedBudgets = new Set(budgets.map(governorBudgetId));
    for (const name of [...appliedBudgets.keys()]) {
      if (wantedBudgets.has(name)) continue;
      try {
        await governor.removeBudget(name);
      } catch (error) {
        // A member pool that failed to move out keeps it; the next sync tries again.
        log(`Could not remove budget ${name}: ${(error as Error).message}`);
        continue;
      }
      appliedBudgets.delete(name);
      report.removedBudgets.push(name);
      report.budgetNames[name] = budgetNames.get(name) ?? name;
      budgetNames.delete(name);
    }
    return report;
  }

  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = running.then(work, work);
    running = next.catch(() => {});
    return next;
  }

  const sync: CatalogSync = {
    syncNow: () => serialized(apply),
    syncIfChanged: () =>
      serialized(async () => ((await store.changeMarker()) === lastMarker ? null : apply())),
    start(intervalMs) {
      stopped = false;
      const tick = () => {
        sync.nudge().finally(() => {
          if (!stopped) timer = clock.setTimeout(tick, intervalMs);
        });
      };
      timer = clock.setTimeout(tick, intervalMs);
    },
    nudge: () =>
      sync
        .syncIfChanged()
        .then((report) => {
          failure = null;
          // Token use and metrics also move the marker; only real changes are worth a line.
          if (report && Object.values(report).some((names) => names.length > 0)) {
            log(describeSync(report));
          }
        })
        .catch((error: unknown) => {
          failure = (error as Error).message;
          log(`Catalog sync failed: ${failure}`);
        }),
    async stop() {
      stopped = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      await running;
    },
    lastFailure: () => failure,
  };
  return sync;
}

/** The catalog budget of a pool, or null. */
function budgetOf(
  pool: PoolRecord,
  budgetById: ReadonlyMap<number, BudgetRecord>,
): BudgetRecord | null {
  return pool.budgetId === null ? null : (budgetById.get(pool.budgetId) ?? null);
}

/**
 * One readable line for a sync report.
 *
 * @example
 * ```ts
 * describeSync(await sync.syncNow()); // "Catalog synced: 2 pools defined (chat, embed), 1 budget defined (local-llm #1)"
 * ```
 */
export function describeSync(report: SyncReport): string {
  const parts = [
    describeList("pool", "defined", report.definedPools),
    describeList("pool", "updated", report.updatedPools),
    describeList("pool", "removed", report.removedPools),
    describeList("budget", "defined", report.definedBudgets.map(budgetLabel)),
    describeList("budget", "updated", report.updatedBudgets.map(budgetLabel)),
    describeList("budget", "removed", report.removedBudgets.map(budgetLabel)),
  ].filter((part) => part !== "");
  function budgetLabel(id: string): string {
    const name = report.budgetNames[id];
    return name === undefined ? id : `${name} #${id}`;
  }
  return `Catalog synced: ${parts.length > 0 ? parts.join(", ") : "no changes"}`;
}

function describeList(noun: string, verb: string, names: readonly string[]): string {
  if (names.length === 0) return "";
  return `${countNoun(names.length, noun)} ${verb} (${names.join(", ")})`;
}
