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
  clearTimeout(handle: TimerHandle): void;
}

/**
 * Wall-clock time with unref'd Node timers.
 *
 * @example
 * ```ts
 * const deadline = systemClock.now() + 1000;
 * ```
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};
