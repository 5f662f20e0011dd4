import type { Clock, TimerHandle } from "./clock.js";

interface ManualTimer {
  id: number;
  due: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to: the deterministic stand-in for {@link systemClock}
 * in tests and property checks. Timers fire in due order (ties in creation order), and
 * `advance` lets pending promise callbacks run between timers, as real time would.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(0);
 * const governor = createGovernor({ clock });
 * await clock.advance(30_000); // fires every timer due within the next 30 s
 * ```
 */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: ManualTimer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, due: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  /** Number of timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing each due timer at its own instant and letting
   * microtasks settle after each one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.earliestDue(target);
      if (!next) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.current = Math.max(this.current, next.due);
      next.fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /** Same as {@link advance} without letting promises settle: for fully synchronous code. */
  advanceSync(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.earliestDue(target);
      if (!next) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.current = Math.max(this.current, next.due);
      next.fn();
    }
    this.current = target;
  }

  private earliestDue(limit: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const timer of this.timers) {
      if (timer.due > limit) continue;
      if (!best || timer.due < best.due || (timer.due === best.due && timer.id < best.id)) {
        best = timer;
      }
    }
    return best;
  }
}

/**
 * Lets queued promise callbacks run (several rounds, for chained awaits), without moving any
 * clock.
 *
 * @example
 * ```ts
 * const pending = governor.acquire("llm", { waitMs: 1_000 });
 * await flushMicrotasks(); // the acquire has been answered or queued by now
 * ```
 */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
