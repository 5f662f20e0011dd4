import { StoreUnavailableError } from "../../src/errors.js";
import type { Definitions } from "./definitions.js";
import type { LocalFallback } from "./local-fallback.js";
import type { QueuedWaiters } from "./queued-waiters.js";
import type { RedisEngine } from "./redis-engine.js";
import type { ScriptRunner } from "./scripts.js";

/** The parts of a Redis slot store that recovery after an outage works on. */
export interface RecoveryParts {
  runner: ScriptRunner;
  engine: RedisEngine;
  /** What this process defined and removed, pushed again in full. */
  definitions: Definitions;
  /** The per-process fallback (failure policy "open"), else null. */
  local: LocalFallback | null;
  queued: QueuedWaiters;
}

/**
 * Before a store reports ok again: reloads the scripts and pushes every definition (Redis
 * may be a new, empty one), then hands over what the local fallback admitted meanwhile.
 *
 * @example
 * ```ts
 * const monitor = new ConnectionHealth({ ..., recover: () => resyncAfterOutage(parts) });
 * ```
 */
export async function resyncAfterOutage(parts: RecoveryParts): Promise<void> {
  const { definitions, engine } = parts;
  await parts.runner.preload();
  for (const pool of [...definitions.removedPools]) {
    await engine.removePool(pool);
    definitions.removedPools.delete(pool);
  }
  for (const [budget, origin] of definitions.budgets) await engine.upsertBudget(budget, origin);
  for (const [pool, config] of definitions.pools) {
    await engine.upsertPool(pool, config).catch((error: unknown) => {
      // A pool that cannot move budgets yet stays where it is until it is defined again.
      if (error instanceof StoreUnavailableError) throw error;
    });
  }
  for (const budget of [...definitions.removedBudgets]) {
    await engine.removeBudget(budget);
    definitions.removedBudgets.delete(budget);
  }
  await handOverLocal(parts);
}

/**
 * Failure policy "open", Redis back: the slots this process granted on its own meanwhile
 * become holders in Redis (adopted, counted against the shared limit until released) and
 * its local waiters join the Redis queue with what is left of their wait. Without this,
 * every process's outage slots would come on top of what Redis admits afterwards. The
 * slots go first: a waiter must not be served a place an adopted slot takes.
 */
async function handOverLocal({ local, engine, queued }: RecoveryParts): Promise<void> {
  if (!local || local.outstanding === 0) return;
  const { holders, waiters } = local.handOver();
  const adopted = holders.map((held) => engine.adopt(held.pool, held.slotId, held.requestLeftMs));
  const rejoined = waiters.map((waiter) => {
    queued.add(waiter.pool, waiter.slotId, waiter.waitedMs + waiter.waitLeftMs, waiter.waitedMs);
    return engine.rejoin(waiter);
  });
  await Promise.all([...adopted, ...rejoined]);
}
