import type { TimerHandle } from "../../src/clock/clock.js";
import { flushMicrotasks, ManualClock } from "../../src/clock/manual-clock.js";
import type { SlotStore } from "../../src/store/types.js";
import { STORE_COMMANDS } from "../store-conformance/async-boundary-store.js";

/**
 * A {@link ManualClock} for stores that answer over the network: at every instant where
 * timers fire, it waits until the store has answered every call in flight before moving
 * on, so the work a timer started (a wake-up's serve script, a governor's cancel) happens
 * at that instant, as it does in real time where a Redis round trip is far below a
 * millisecond.
 *
 * A plain ManualClock only lets microtasks run between timers: a script still on the wire
 * sees the clock run ahead of it, so a grant the store made at a lease deadline reaches the
 * governor after wait deadlines it would have beaten in real time. The property suite would
 * then judge a latency the clock invented (hundreds of virtual milliseconds per round trip),
 * not the store.
 *
 * @example
 * ```ts
 * const clock = new SettlingClock();
 * const store = trackCalls(createRedisSlotStore({ url, prefix, clock }), clock);
 * await clock.advance(1_000); // each due instant: timers fire, then the store answers
 * ```
 */
export class SettlingClock extends ManualClock {
  private readonly dues = new Map<TimerHandle, number>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly idleHooks: Array<() => Promise<void>> = [];

  override setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = super.setTimeout(() => {
      this.dues.delete(handle);
      fn();
    }, ms);
    this.dues.set(handle, this.now() + Math.max(0, ms));
    return handle;
  }

  override clearTimeout(handle: TimerHandle): void {
    this.dues.delete(handle);
    super.clearTimeout(handle);
  }

  /** Moves time forward instant by instant, settling the store after each one that fired timers. */
  override async advance(ms: number): Promise<void> {
    const target = this.now() + ms;
    await this.settle();
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      await super.advance(next - this.now());
      await this.settle();
    }
    await super.advance(target - this.now());
    await this.settle();
  }

  /** Counts `work` as in flight until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => {
      this.inFlight.delete(work);
    };
    work.then(forget, forget);
    return work;
  }

  /** Also waits for `whenIdle` (work a store starts on its own, e.g. on a wake-up timer). */
  waitFor(whenIdle: () => Promise<void>): void {
    this.idleHooks.push(whenIdle);
  }

  /** Resolves once no tracked call is in flight, including calls made while waiting. */
  async settle(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await flushMicrotasks();
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      for (const whenIdle of this.idleHooks) await whenIdle();
    }
    await flushMicrotasks();
  }

  private nextDue(limit: number): number | undefined {
    let next: number | undefined;
    for (const due of this.dues.values()) {
      if (due <= limit && (next === undefined || due < next)) next = due;
    }
    return next;
  }
}

/**
 * Makes every promise `store` answers count as in flight on `clock`, including the work it
 * starts on its own (`whenIdle`), so {@link SettlingClock.advance} waits for it.
 */
export function trackCalls<S extends SlotStore>(store: S, clock: SettlingClock): S {
  const tracked = store as unknown as Record<string, unknown>;
  for (const method of STORE_COMMANDS) {
    const call = store[method].bind(store) as (...args: unknown[]) => unknown;
    tracked[method] = (...args: unknown[]) => {
      const answer = call(...args);
      return answer instanceof Promise ? clock.track(answer) : answer;
    };
  }
  if (store.whenIdle) clock.waitFor(store.whenIdle.bind(store));
  return store;
}
