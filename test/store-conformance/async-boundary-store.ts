import type { SlotStore } from "../../src/store/types.js";

/** The store operations that change or read slot state: what a networked store sends as commands. */
export const STORE_COMMANDS = [
  "upsertBudget",
  "removeBudget",
  "upsertPool",
  "removePool",
  "acquire",
  "cancel",
  "renew",
  "inspect",
  "release",
  "setLearned",
  "snapshot",
] as const;

/** Methods whose answers are deferred; `setListener` and `whenIdle` stay as they are. */
const DEFERRED = ["now", ...STORE_COMMANDS, "close"] as const;

/**
 * Puts a synchronous store behind an asynchronous boundary, as a networked store is: each
 * operation runs, and is answered, on a later turn of the event loop (`setImmediate`, not a
 * timer), in call order like commands on one connection. ManualClock advances do not wait for
 * those turns, so store timers fire while commands are in flight: the governor's race paths
 * (a timeout or abort against a handoff, a handoff announced before its acquire answered) run
 * deterministically without Redis. `whenIdle` waits for every command still in flight. With
 * `returnsWaiters: false` no waiter is handed back, so the governor's index by slot id runs.
 *
 * @example
 * ```ts
 * const store = asyncBoundary(new MemorySlotStore({ clock }));
 * ```
 */
export function asyncBoundary(
  inner: SlotStore,
  options: { returnsWaiters?: boolean } = {},
): SlotStore {
  const returnsWaiters = options.returnsWaiters ?? inner.returnsWaiters;
  const inFlight = new Set<Promise<unknown>>();
  const defer = <T>(answer: () => T): Promise<T> => {
    const promise = new Promise<T>((resolve, reject) => {
      setImmediate(() => {
        try {
          resolve(answer());
        } catch (error) {
          reject(error);
        }
      });
    });
    inFlight.add(promise);
    const forget = () => inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  };
  const wrapper: SlotStore = {
    kind: `${inner.kind}+async`,
    returnsWaiters,
    // A store that returns no waiters hands none back, as a networked store cannot.
    setListener: (listener) =>
      inner.setListener(
        returnsWaiters
          ? listener
          : {
              granted: (pool, slot, queuedMs) => listener.granted(pool, slot, queuedMs),
              reclaimed: (pool, slotIds) => listener.reclaimed(pool, slotIds),
            },
      ),
    async whenIdle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await inner.whenIdle?.();
    },
  } as SlotStore;
  for (const method of DEFERRED) {
    const call = (inner[method] as (...args: unknown[]) => unknown).bind(inner);
    (wrapper as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
      defer(() => call(...args));
  }
  return wrapper;
}
