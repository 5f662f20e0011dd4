/** Options of {@link RepeatLimiter}. */
export interface RepeatLimiterOptions {
  /** Lines written per key in one window; the rest are counted. */
  burst: number;
  /** The window, from a key's first line on (ms). */
  windowMs: number;
  /** Told at the end of a window in which lines of `key` were held back, with how many. */
  onHeldBack(key: string, count: number): void;
}

interface KeyWindow {
  written: number;
  heldBack: number;
}

/**
 * Keeps a flood of alike log lines short: per key (a pool and a status, say), the first
 * `burst` lines of a window are written and the rest counted, then reported in one line when
 * the window ends. An overloaded origin or a queue timing out thousands of callers a second
 * then costs the log a few lines, not one per request, and nothing goes unmentioned.
 *
 * @example
 * ```ts
 * const repeats = new RepeatLimiter({ burst: 5, windowMs: 10_000, onHeldBack: (key, n) => log.warn(`${n} more like ${key}`) });
 * if (repeats.allow(`${pool} ${status}`)) log.error("Request failed", fields);
 * ```
 */
export class RepeatLimiter {
  private readonly windows = new Map<string, KeyWindow>();

  constructor(private readonly options: RepeatLimiterOptions) {}

  /** Whether a line of `key` is written now (else it is counted for the window's report). */
  allow(key: string): boolean {
    let window = this.windows.get(key);
    if (!window) {
      window = { written: 0, heldBack: 0 };
      this.windows.set(key, window);
      // Unref'd: a pending report never keeps a stopping process alive.
      setTimeout(() => this.close(key), this.options.windowMs).unref();
    }
    if (window.written < this.options.burst) {
      window.written += 1;
      return true;
    }
    window.heldBack += 1;
    return false;
  }

  private close(key: string): void {
    const window = this.windows.get(key);
    this.windows.delete(key);
    if (window && window.heldBack > 0) this.options.onHeldBack(key, window.heldBack);
  }
}
