/**
 * Remembers the promises still in flight so tests can wait until the store is quiet
 * (`whenIdle`), including work that started while waiting.
 *
 * @example
 * ```ts
 * const idle = new IdleTracker();
 * idle.track(runScript());
 * await idle.whenIdle();
 * ```
 */
export class IdleTracker {
  private readonly inFlight = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => {
      this.inFlight.delete(work);
    };
    work.then(forget, forget);
    return work;
  }

  get busy(): boolean {
    return this.inFlight.size > 0;
  }

  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
