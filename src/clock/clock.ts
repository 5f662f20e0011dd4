/** Opaque handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = unknown;

/**
 * The governor's only source of time and timers. Inject a {@link ManualClock} in tests so
 * leases, queue timeouts and RPM turns can be driven without real sleeps.
 *
 * @example
 * ```ts
 * const governor = createGovernor({ clock: systemClock });
 * ```
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. Timers never keep the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer of this clock's `setTimeout` (one already run or cleared: nothing). */
  clearTimeout(handle: TimerHandle): void;
  /**
   * Keeps the process alive until the returned function is called. The governor holds one
   * while any caller of this process waits in a queue: a wait that only a timer can end (an
   * RPM turn, a Retry-After pause, a lease running out) must not let Node exit under the
   * caller's feet. Optional: clocks without a process to keep (ManualClock) leave it out.
   */
  keepAlive?(): () => void;
}

/** Node runs a timer longer than this (about 24.8 days) after 1 ms instead: such waits are chained. */
const MAX_NODE_TIMER_MS = 2_147_483_647;

/** A wait longer than Node's timer range, as a chain of shorter timers. */
class LongTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly fn: () => void,
    private readonly dueAt: number,
  ) {
    this.arm();
  }

  cancel(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    const left = this.dueAt - Date.now();
    if (left <= MAX_NODE_TIMER_MS) {
      this.timer = setTimeout(this.fn, Math.max(0, left));
    } else {
      this.timer = setTimeout(() => this.arm(), MAX_NODE_TIMER_MS);
    }
    this.timer.unref?.();
  }
}

/**
 * Wall-clock time with unref'd Node timers (a queued caller keeps the process alive through
 * `keepAlive`, not through them). Delays beyond Node's timer range (~24.8 days,
 * e.g. a far Retry-After date) are honoured, not cut to 1 ms.
 *
 * @example
 * ```ts
 * const deadline = systemClock.now() + 1000;
 * ```
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    if (ms > MAX_NODE_TIMER_MS) return new LongTimer(fn, Date.now() + ms);
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return timer;
  },
  clearTimeout(handle) {
    if (handle instanceof LongTimer) handle.cancel();
    else clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
  keepAlive() {
    // A ref'd timer that never fires in practice: it only holds the event loop open.
    const holder = setInterval(ignore, MAX_NODE_TIMER_MS);
    return () => clearInterval(holder);
  },
};

function ignore(): void {}
