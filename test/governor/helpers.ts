import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor } from "../../src/governor/types.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";

/** A governor on a manual clock with the memory store. */
export function manualGovernor(start = 1_700_000_000_000): {
  governor: Governor;
  clock: ManualClock;
} {
  const clock = new ManualClock(start);
  const governor = createGovernor({ clock, store: new MemorySlotStore({ clock }) });
  return { governor, clock };
}

/** Settles a promise into a tagged result without throwing. */
export async function outcomeOf<T>(
  promise: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Tracks whether a promise settled yet, without awaiting it. */
export function track<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  return { settled: () => settled, promise };
}

/** A `run()` whose work waits until `finish()`, recording why its signal aborted (null: never). */
export interface PendingRun {
  running: Promise<string>;
  finish(): void;
  abortReason(): unknown;
  /** The slot id the work holds, once it started ("" before). */
  slotId(): string;
}

/**
 * Starts a `run()` on `pool` whose work only ends when told to: for tests of what happens
 * to work in flight (leases, reclaims, close, drain).
 *
 * @example
 * ```ts
 * const work = pendingRun(governor, "llm");
 * await governor.close();
 * expect(work.abortReason()).toBeInstanceOf(GovernorClosedError);
 * ```
 */
export function pendingRun(governor: Governor, pool: string): PendingRun {
  let finish: () => void = () => {};
  let reason: unknown = null;
  let slotId = "";
  const running = governor.run(pool, ({ signal, grant }) => {
    slotId = grant.slotId;
    signal.addEventListener("abort", () => {
      reason = signal.reason;
    });
    return new Promise<string>((resolve) => {
      finish = () => resolve("finished");
    });
  });
  return { running, finish: () => finish(), abortReason: () => reason, slotId: () => slotId };
}
