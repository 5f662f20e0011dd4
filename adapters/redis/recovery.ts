import { StoreUnavailableError } from "../../src/errors.js";
import type { MaybePromise } from "../../src/store/types.js";
import type { Definitions } from "./definitions.js";
import type { EventSubscriptions } from "./event-subscriptions.js";
import type { LocalFallback } from "./local-fallback.js";
import type { ProcessLedger } from "./process-ledger.js";
import type { RedisEngine } from "./redis-engine.js";
import type { ScriptRunner } from "./script-runner.js";

/**
 * The part of the store a recovery puts back: everything (a single Redis), one shard of a
 * cluster, or one group that lost its data. Each test is by where the thing lives.
 */
export interface RecoveryScope {
  /** A hash tag on the node that holds the scope (null: the whole store), for keyless commands. */
  readonly at: string | null;
  /** A group, by hash tag. */
  tag(tag: string): boolean;
  pool(pool: string): boolean;
  budget(budget: string): boolean;
}

/** The scope of the whole store. */
export const EVERYTHING: RecoveryScope = {
  at: null,
  tag: () => true,
  pool: () => true,
  budget: () => true,
};

/** The parts of a Redis slot store that recovery after an outage works on. */
export interface RecoveryParts {
  /** What the outage or the loss hit; the rest is left as it is. */
  scope: RecoveryScope;
  runner: ScriptRunner;
  engine: RedisEngine;
  events: EventSubscriptions;
  /** What this process defined and removed, pushed again in full. */
  definitions: Definitions;
  /** The per-process fallback (failure policy "open"), else null. */
  local: LocalFallback | null;
  /** This process's waiters and slots in Redis before the outage. */
  ledger: ProcessLedger;
  /** Redis time (the clock of lease deadlines). */
  now(): MaybePromise<number>;
}

/**
 * Before a store reports ok again: reloads the scripts and pushes every definition (Redis
 * may be a new, empty one), listens to its groups again, then puts back what Redis may have
 * lost and what the local fallback admitted meanwhile (see {@link restoreSlotsAndWaiters}).
 * Safe to run again after a failure part-way: each step is idempotent.
 *
 * @example
 * ```ts
 * const monitor = new ConnectionHealth({ ..., recover: () => resyncAfterOutage(parts) });
 * ```
 */
export async function resyncAfterOutage(parts: RecoveryParts): Promise<void> {
  const { definitions, engine, scope } = parts;
  await parts.runner.preload(scope.at);
  for (const pool of [...definitions.removedPools].filter(scope.pool)) {
    await engine.removePool(pool);
    definitions.removedPools.delete(pool);
  }
  for (const [budget, origin] of definitions.budgets) {
    if (scope.budget(budget)) await engine.upsertBudget(budget, origin);
  }
  for (const [pool, config] of definitions.pools) {
    if (!scope.pool(pool)) continue;
    const created = await engine.upsertPool(pool, config, true).catch((error: unknown) => {
      // A pool that cannot move budgets yet stays where it is until it is defined again.
      if (error instanceof StoreUnavailableError) throw error;
      return false;
    });
    // Redis lost it: what this process's learner last told it comes back with it.
    const learned = definitions.learned.get(pool);
    if (created && learned) await engine.setLearned(pool, learned, false);
  }
  for (const budget of [...definitions.removedBudgets].filter(scope.budget)) {
    await engine.removeBudget(budget);
    definitions.removedBudgets.delete(budget);
  }
  // Other processes skip the waiters of a process that does not listen: listen first.
  await parts.events.renewAll(scope.tag);
  await restoreSlotsAndWaiters(parts);
}

/**
 * Slots first, then waiters (a waiter must not be served a place a slot in use takes):
 * - this process's Redis slots whose lease still runs are adopted again: a Redis restarted
 *   without persistence forgot them while their callers still work (one Redis still holds
 *   stays as it is);
 * - failure policy "open": the slots this process granted on its own meanwhile become
 *   holders in Redis, counted against the shared limit until released, so no process's
 *   outage slots come on top of what Redis admits afterwards;
 * - every waiter rejoins, the longest waiting first: one still queued keeps its place, one
 *   dropped or forgotten joins the tail with what is left of its wait, one handed a slot
 *   meanwhile gets it (see `lua/rejoin.lua`); the local fallback's waiters come with them.
 */
async function restoreSlotsAndWaiters(parts: RecoveryParts): Promise<void> {
  const { local, engine, ledger, scope } = parts;
  const { queued, held } = ledger;
  const now = await parts.now();
  // A Redis waiter moved to the local queue and served there may still be queued in Redis:
  // cancelled there before anything is handed over (a recovery cut short cancels again), so
  // Redis does not hand it a slot later; one it was handed meanwhile is the slot adopted next.
  const movedHolders = local?.movedHolders(scope.pool) ?? [];
  await Promise.all(movedHolders.map(({ pool, slotId }) => engine.cancel(pool, slotId)));
  // The local fallback's slots and waiters are recorded as this process's Redis ones before
  // anything is sent, so a recovery cut short hands them over the next time.
  const handed = local && local.outstanding > 0 ? local.handOver(scope.pool) : null;
  for (const { pool, slotId, requestLeftMs } of handed?.holders ?? []) {
    const requestDeadline = now + requestLeftMs;
    held.add(pool, { slotId, leaseDeadline: requestDeadline, requestDeadline });
  }
  for (const waiter of handed?.waiters ?? []) {
    queued.add(waiter.pool, waiter.slotId, waiter.waitedMs + waiter.waitLeftMs, waiter.waitedMs);
  }
  await Promise.all(
    held.adoptable(now, scope.pool).map(async ({ pool, slotId, requestLeftMs, leaseDeadline }) => {
      const slot = await engine.adopt(pool, slotId, requestLeftMs, leaseDeadline);
      // Held in Redis now, with the lease Redis gave it; unless its caller released it
      // meanwhile (that release is sent to Redis once the store is up).
      if (slot && held.has(slotId)) held.add(pool, slot);
    }),
  );
  await rejoinWaiters(parts);
}

/**
 * The store reports ok again: the releases and cancels Redis did not get while it was away
 * are sent now (a cancelled waiter handed a slot meanwhile gives it back at once), and, when
 * the event subscription came back while the store was still down (`rejoin`), the waiters
 * rejoin once more, as other processes may have dropped them meanwhile.
 *
 * @example
 * ```ts
 * monitor.onChange((status) => { if (status.state === "ok") void afterRecovery(parts, false); });
 * ```
 */
export async function afterRecovery(
  parts: Pick<RecoveryParts, "events" | "engine" | "ledger" | "scope">,
  rejoin: boolean,
): Promise<void> {
  const { engine, ledger } = parts;
  const { releases, cancels } = ledger.takeUnsent(parts.scope.pool);
  const released = releases.map(([slotId, pool]) =>
    engine.release(pool, slotId).catch(() => ledger.releaseLater(pool, slotId)),
  );
  const cancelled = cancels.map(async ([slotId, pool]) => {
    try {
      const result = await engine.cancel(pool, slotId);
      if (result.type !== "granted") return;
      // Nobody wants it: no record may keep it alive for a later adopt.
      ledger.done(slotId);
      await engine.release(pool, slotId);
    } catch {
      ledger.cancelLater(pool, slotId);
    }
  });
  await Promise.all([...released, ...cancelled]);
  // Redis went away again: the next recovery rejoins; a waiter's deadline still asks Redis.
  if (rejoin) await rejoinAfterBlip(parts).catch(() => {});
}

/**
 * The event subscription alone came back (Redis kept its data): listens again (resolves once
 * Redis confirmed it; ioredis also subscribes again on its own), then every waiter rejoins,
 * as other processes dropped those a handoff reached meanwhile.
 *
 * @example
 * ```ts
 * subscriber.on("ready", () => void rejoinAfterBlip(parts).catch(() => {}));
 * ```
 */
export async function rejoinAfterBlip(
  parts: Pick<RecoveryParts, "events" | "engine" | "ledger" | "scope">,
): Promise<void> {
  await parts.events.renewAll(parts.scope.tag);
  await rejoinWaiters(parts);
}

/** Every waiter of this process in the scope to `rejoin.lua`, the longest waiting first. */
async function rejoinWaiters(parts: Pick<RecoveryParts, "engine" | "ledger" | "scope">) {
  const waiters = parts.ledger.queued.rejoining().filter(({ pool }) => parts.scope.pool(pool));
  await Promise.all(waiters.map((waiter) => parts.engine.rejoin(waiter)));
}
