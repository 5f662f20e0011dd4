import type { Clock, TimerHandle } from "../../src/clock/clock.js";

interface WakeTimer<T> {
  at: number;
  handle: TimerHandle | null;
  target: T;
}

/**
 * One local timer per group, at the earliest instant the group needs serving that this
 * process learned of (a lease deadline, a time gate opening). No polling: a timer exists
 * only while there is something to wait for, and each serve answers the next instant.
 *
 * `delayOf` turns an instant into a delay (against the injected clock, or against the
 * server's `now` in TIME mode). An instant already due runs at once, so a chain of
 * deadlines passed during one ManualClock advance is caught up before the store is idle.
 *
 * @example
 * ```ts
 * const timers = new WakeTimers(clock, (route, at) => serve(route, at));
 * timers.arm(route.base, route, leaseDeadline, leaseDeadline - now);
 * ```
 */
export class WakeTimers<T> {
  private readonly timers = new Map<string, WakeTimer<T>>();

  constructor(
    private readonly clock: Clock,
    private readonly fire: (target: T, at: number) => void,
  ) {}

  /** Arms (or moves earlier) the timer of `key`; a later instant than the armed one is ignored. */
  arm(key: string, target: T, at: number, delayMs: number): void {
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing?.handle != null) this.clock.clearTimeout(existing.handle);
    if (delayMs <= 0) {
      this.timers.delete(key);
      this.fire(target, at);
      return;
    }
    const timer: WakeTimer<T> = { at, handle: null, target };
    timer.handle = this.clock.setTimeout(() => {
      if (this.timers.get(key) !== timer) return;
      this.timers.delete(key);
      this.fire(target, at);
    }, delayMs);
    this.timers.set(key, timer);
  }

  /** Forgets the timer of `key` (a removed pool). */
  cancel(key: string): void {
    const existing = this.timers.get(key);
    if (existing?.handle != null) this.clock.clearTimeout(existing.handle);
    this.timers.delete(key);
  }

  clear(): void {
    for (const timer of this.timers.values()) {
      if (timer.handle != null) this.clock.clearTimeout(timer.handle);
    }
    this.timers.clear();
  }
}
