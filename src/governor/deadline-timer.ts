import type { Clock, TimerHandle } from "../clock/clock.js";
import { MinHeap } from "../util/min-heap.js";

/**
 * Many deadlines, one clock timer: items are pushed with a deadline and handed to `onExpire`
 * when it passes. Items that no longer matter are skipped by `isLive`, so removal is free.
 *
 * @example
 * ```ts
 * const timeouts = new DeadlineTimer(clock, (waiter) => waiter.timeOut(), (waiter) => !waiter.settled);
 * timeouts.add(clock.now() + 5000, waiter);
 * ```
 */
export class DeadlineTimer<T> {
  private readonly heap = new MinHeap<T>();
  private timer: TimerHandle | null = null;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly onExpire: (item: T) => void,
    private readonly isLive: (item: T) => boolean,
  ) {}

  add(deadline: number, item: T): void {
    this.heap.push(deadline, item);
    if (deadline < this.timerAt) this.arm(deadline);
  }

  clear(): void {
    this.heap.clear();
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private arm(deadline: number): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timerAt = deadline;
    this.timer = this.clock.setTimeout(() => this.fire(), deadline - this.clock.now());
  }

  private fire(): void {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (;;) {
      const deadline = this.heap.peekKey();
      if (deadline === undefined) return;
      if (deadline > now) {
        this.arm(deadline);
        return;
      }
      const item = this.heap.pop()!;
      if (this.isLive(item)) this.onExpire(item);
    }
  }
}
