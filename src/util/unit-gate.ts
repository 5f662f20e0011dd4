/**
 * Keeps multi-step units (transactions) apart from single calls on one shared resource:
 * units run one at a time, and a single call waits while any unit is open or queued, so it
 * never lands inside one. Single calls themselves do not wait for each other.
 *
 * @example
 * ```ts
 * const gate = new UnitGate();
 * await gate.exclusive(async () => { begin(); await work(); commit(); });
 * await gate.idle(); // then a single synchronous call
 * ```
 */
export class UnitGate {
  private tail: Promise<void> = Promise.resolve();
  private units = 0;

  /** Runs `body` once every earlier unit has ended; single calls wait until it ends. */
  async exclusive<T>(body: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((resolve) => {
      release = resolve;
    });
    this.units++;
    try {
      await previous;
      return await body();
    } finally {
      this.units--;
      release();
    }
  }

  /** Resolves once no unit is open or queued (at once when none is). */
  async idle(): Promise<void> {
    while (this.units > 0) await this.tail;
  }
}
