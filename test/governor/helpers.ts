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
