import type { Clock, TimerHandle } from "../../src/index.js";

interface SimTimer {
  due: number;
  /** Creation order: breaks ties between timers due at the same instant. */
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** Resolves after every queued promise callback has run (the macrotask queue comes after). */
function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The clock of a discrete-event simulation: time jumps from one timer to the next, and
 * before each jump every pending promise callback runs to completion, so a chain of awaits
 * started by one event (a response, then a release, then the next waiter's grant and call)
 * happens entirely at that event's instant. Minutes of simulated traffic run in seconds.
 *
 * It plays the part `ManualClock` plays in unit tests; ManualClock flushes a fixed number of
 * microtask rounds per timer, which long await chains can outlast, and an event finishing
 * late in simulated time would skew the results.
 *
 * @example
 * ```ts
 * const clock = new EventClock();
 * const governor = createGovernor({ clock });
 * startCallers(governor, clock);
 * await clock.runFor(600_000); // ten simulated minutes
 * ```
 */
export class EventClock implements Clock {
  private current: number;
  private nextSeq = 0;
  private readonly heap: SimTimer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const delay = Number.isFinite(ms) && ms > 0 ? ms : 0;
    const timer: SimTimer = {
      due: this.current + delay,
      seq: this.nextSeq++,
      fn,
      cancelled: false,
    };
    this.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    if (handle && typeof handle === "object") (handle as SimTimer).cancelled = true;
  }

  /** Resolves after `ms`, on this clock. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** Runs every event due within the next `ms`, in order, then sets the time to the end. */
  async runFor(ms: number): Promise<void> {
    const end = this.current + ms;
    await drainMicrotasks();
    for (;;) {
      const next = this.heap[0];
      if (next === undefined || next.due > end) break;
      this.pop();
      if (next.cancelled) continue;
      this.current = next.due;
      next.fn();
      await drainMicrotasks();
    }
    this.current = end;
    await drainMicrotasks();
  }

  private push(timer: SimTimer): void {
    const heap = this.heap;
    let index = heap.push(timer) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!earlier(timer, heap[parent]!)) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = timer;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && earlier(heap[right]!, heap[left]!) ? right : left;
      if (!earlier(heap[child]!, last)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
  }
}

function earlier(a: SimTimer, b: SimTimer): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}
