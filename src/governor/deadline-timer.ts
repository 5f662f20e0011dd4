import type { Clock, TimerHandle } from "../clock/clock.js";
import { MinHeap } from "../util/min-heap.js";

/**
 * Many deadlines, one clock timer: items are pushed with a deadline and handed to `onExpire`
 * when it passes. Items that no longer matter are skipped by `isLive`, so removal is free.
 *
 * Why two lanes: waiters mostly share one wait budget (the pool's queue timeout), so their
 * deadlines arrive in order. Those go to a FIFO lane (O(1) in and out); only a deadline earlier
 * than the lane's last goes to the heap.
 *
 * @example
 * ```ts
 * const timeouts = new DeadlineTimer(clock, (waiter) => waiter.timeOut(), (waiter) => !waiter.settled);
 * timeouts.add(clock.now() + 5000, waiter);
 * ```
 */
export class DeadlineTimer<T> {
  private readonly heap = new MinHeap<T>();
  private laneKeys: number[] = [];
  private laneItems: (T | undefined)[] = [];
  private laneHead = 0;
  private timer: TimerHandle | null = null;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly onExpire: (item: T) => void,
    private readonly isLive: (item: T) => boolean,
  ) {}

  add(deadline: number, item: T): void {
    const lane = this.laneKeys;
    if (this.laneHead === lane.length || deadline >= lane[lane.length - 1]!) {
      lane.push(deadline);
      this.laneItems.push(item);
    } else {
      this.heap.push(deadline, item);
    }
    if (deadline < this.timerAt) this.arm(deadline);
  }

  /** Drops items that no longer matter from the front, so they are not kept until their deadline. */
  dropSettledTop(): void {
    const heap = this.heap;
    while (heap.size > 0 && !this.isLive(heap.peek() as T)) heap.pop();
    const items = this.laneItems;
    while (this.laneHead < items.length && !this.isLive(items[this.laneHead] as T)) {
      this.shiftLane();
    }
  }

  clear(): void {
    this.heap.clear();
    this.laneKeys = [];
    this.laneItems = [];
    this.laneHead = 0;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private shiftLane(): T {
    const item = this.laneItems[this.laneHead] as T;
    this.laneItems[this.laneHead] = undefined;
    this.laneHead++;
    if (this.laneHead === this.laneKeys.length) {
      this.laneKeys.length = 0;
      this.laneItems.length = 0;
      this.laneHead = 0;
    } else if (this.laneHead > 1024 && this.laneHead * 2 > this.laneKeys.length) {
      this.laneKeys.splice(0, this.laneHead);
      this.laneItems.splice(0, this.laneHead);
      this.laneHead = 0;
    }
    return item;
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
      const heapKey = this.heap.peekKey() ?? Number.POSITIVE_INFINITY;
      const laneKey =
        this.laneHead < this.laneKeys.length
          ? this.laneKeys[this.laneHead]!
          : Number.POSITIVE_INFINITY;
      const deadline = Math.min(heapKey, laneKey);
      if (deadline === Number.POSITIVE_INFINITY) return;
      if (deadline > now) {
        this.arm(deadline);
        return;
      }
      const item = heapKey <= laneKey ? this.heap.pop()! : this.shiftLane();
      if (this.isLive(item)) this.onExpire(item);
    }
  }
}
