/** The RPM window: 60 s, in ms. */
export const RPM_WINDOW_MS = 60_000;

/**
 * The times of recent grants, for an exact sliding-window RPM gate: at most `rpm` grants in
 * any window `(now − 60 s, now]`. A ring buffer sized to the largest gate in use, so
 * recording a grant allocates nothing.
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
   * Grants are logged even without a gate, so an RPM learned later counts the traffic that
   * already flowed. Learned gates above this size see only this much history at first.
   */
  static readonly MIN_CAPACITY = 1024;
  private times: Float64Array = new Float64Array(GrantLog.MIN_CAPACITY);
  private next = 0;
  private count = 0;

  /** Records a grant at `now`. Grants beyond the capacity overwrite the oldest. */
  record(now: number): void {
    const capacity = this.times.length;
    if (capacity === 0) return;
    this.times[this.next] = now;
    this.next = (this.next + 1) % capacity;
    if (this.count < capacity) this.count++;
  }

  /** Makes room for a gate of `rpm`, keeping the most recent grants. */
  ensureCapacity(rpm: number): void {
    if (rpm <= this.times.length) return;
    const recent = this.recentFirst();
    this.times = new Float64Array(rpm);
    this.count = 0;
    this.next = 0;
    for (let i = recent.length - 1; i >= 0; i--) this.record(recent[i]!);
  }

  /**
   * ms until one more grant fits a gate of `rpm` (0 = now). The `rpm`-th most recent grant
   * must have left the window.
   */
  waitMs(now: number, rpm: number): number {
    if (this.count < rpm) return 0;
    const capacity = this.times.length;
    const index = (this.next - rpm + capacity * 2) % capacity;
    const leavesAt = this.times[index]! + RPM_WINDOW_MS;
    return leavesAt > now ? leavesAt - now : 0;
  }

  /** Grants recorded within the window ending at `now`. */
  countInWindow(now: number): number {
    let inWindow = 0;
    for (const time of this.recentFirst()) {
      if (time <= now - RPM_WINDOW_MS) break;
      inWindow++;
    }
    return inWindow;
  }

  private recentFirst(): number[] {
    const capacity = this.times.length;
    const out: number[] = [];
    for (let i = 1; i <= this.count; i++)
      out.push(this.times[(this.next - i + capacity) % capacity]!);
    return out;
  }
}
