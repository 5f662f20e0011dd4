import type { Clock } from "../../src/clock/clock.js";

/** A waiter of this process queued in Redis. */
interface QueuedWaiter {
  pool: string;
  waitMs: number;
  /** When it was queued, on the store's timer clock. */
  since: number;
}

/** A waiter to send to `rejoin.lua`, with how long it waited and may still wait. */
export interface RejoiningWaiter {
  pool: string;
  slotId: string;
  waitedMs: number;
  waitLeftMs: number;
}

/**
 * The waiters this process has queued in Redis, from the acquire that queued them to their
 * handoff, cancel or release. While this process's event subscription is gone (a reconnect),
 * other processes skip its waiters and drop them from the queue, as they would a dead
 * process's; once it is back, each of them rejoins (see `lua/rejoin.lua`) instead of waiting
 * out its whole wait for nothing.
 *
 * @example
 * ```ts
 * const queued = new QueuedWaiters(clock);
 * queued.add("llm", slotId, 5_000);
 * for (const waiter of queued.rejoining()) await engine.rejoin(waiter);
 * ```
 */
export class QueuedWaiters {
  private readonly waiters = new Map<string, QueuedWaiter>();

  constructor(private readonly clock: Clock) {}

  /** Records a waiter queued now, or `waitedMs` ago (one handed over from elsewhere). */
  add(pool: string, slotId: string, waitMs: number, waitedMs = 0): void {
    this.waiters.set(slotId, { pool, waitMs, since: this.clock.now() - waitedMs });
  }

  delete(slotId: string): void {
    this.waiters.delete(slotId);
  }

  forgetPool(pool: string): void {
    for (const [slotId, waiter] of this.waiters) {
      if (waiter.pool === pool) this.waiters.delete(slotId);
    }
  }

  clear(): void {
    this.waiters.clear();
  }

  /** Every waiter, the longest waiting first, with its wait so far and what is left. */
  rejoining(): RejoiningWaiter[] {
    const now = this.clock.now();
    const waiters = [...this.waiters].map(([slotId, { pool, waitMs, since }]) => {
      const waitedMs = Math.max(0, now - since);
      return { pool, slotId, waitedMs, waitLeftMs: Math.max(0, waitMs - waitedMs) };
    });
    // A waiter handed over from the local fallback was added late but may have waited long.
    return waiters.sort((first, second) => second.waitedMs - first.waitedMs);
  }
}
