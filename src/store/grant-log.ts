/** The RPM window: 60 s, in ms. */
export const RPM_WINDOW_MS = 60_000;

/** Slots of a new log: most pools never see more grants than this in a minute. */
const INITIAL_CAPACITY = 64;

/**
 * The times of recent grants, for an exact sliding-window RPM gate: at most `rpm` grants in
 * any window `(now − 60 s, now]`. A ring buffer that grows only while the grants of the last
 * minute fill it, up to the largest gate in use: an RPM of a million costs nothing until a
 * million grants arrive within one minute. Recording a grant allocates nothing except when
 * the buffer doubles.
 *
 * @example
 * ```ts
 * const log = new GrantLog();
 * log.record(now);
 * log.waitMs(now, 60); // 0 while fewer than 60 grants fall in the last minute
 * ```
 */
export class GrantLog {
  /**
   * Grants kept even without a gate, so an RPM learned later counts the traffic that already
   * flowed. Learned gates above this size see only this much history at first.
   */
  static readonly MIN_HISTORY = 1024;
  private times = new Float64Array(INITIAL_CAPACITY);
  /** Index of the oldest grant kept. */
  private head = 0;
  private count = 0;
  /** Most grants worth keeping: the largest gate in use (at least {@link MIN_HISTORY}). */
  private keep = GrantLog.MIN_HISTORY;

  /** Records a grant at `now`. Beyond what is worth keeping, the oldest grant is dropped. */
  record(now: number): void {
    let capacity = this.times.length;
    if (this.count === capacity) {
      // A grant older than the window no longer counts for any gate.
      if (capacity < this.keep && this.times[this.head]! > now - RPM_WINDOW_MS) {
        this.grow(Math.min(this.keep, capacity * 2));
        capacity = this.times.length;
      } else {
        this.head = this.head + 1 === capacity ? 0 : this.head + 1;
        this.count--;
      }
    }
    let index = this.head + this.count;
    if (index >= capacity) index -= capacity;
    this.times[index] = now;
    this.count++;
  }

  /** Keeps enough history for a gate of `rpm` (the most recent `rpm` grants). */
  ensureCapacity(rpm: number): void {
    if (rpm > this.keep) this.keep = rpm;
  }

  /**
   * ms until one more grant fits a gate of `rpm` (0 = now). The `rpm`-th most recent grant
   * must have left the window.
   */
  waitMs(now: number, rpm: number): number {
    if (this.count < rpm) return 0;
    const capacity = this.times.length;
    let index = this.head + this.count - rpm;
    if (index >= capacity) index -= capacity;
    const leavesAt = this.times[index]! + RPM_WINDOW_MS;
    return leavesAt > now ? leavesAt - now : 0;
  }

  /** Grants kept now (for tests: the log never holds more than needed). */
  get size(): number {
    return this.count;
  }

  private grow(capacity: number): void {
    const grown = new Float64Array(capacity);
    const old = this.times;
    const firstPart = Math.min(this.count, old.length - this.head);
    grown.set(old.subarray(this.head, this.head + firstPart), 0);
    grown.set(old.subarray(0, this.count - firstPart), firstPart);
    this.times = grown;
    this.head = 0;
  }
}
