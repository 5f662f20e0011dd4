import type { SlotStore } from "../store/types.js";

/**
 * Frees a slot nobody will take (its caller aborted or is gone). Never throws: a store that
 * cannot answer leaves the slot to its lease, which frees it within one term.
 *
 * @example
 * ```ts
 * releaseQuietly(store, "llm", slotId); // the store hands it to the next waiter at once
 * ```
 */
export function releaseQuietly(store: SlotStore, pool: string, slotId: string): void {
  try {
    const answer = store.release(pool, slotId);
    if (answer instanceof Promise) answer.catch(ignore);
  } catch {
    // Left to the lease.
  }
}

/** Does nothing (a rejection handler for answers nobody waits for). */
export function ignore(): void {}
