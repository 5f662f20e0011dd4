/**
 * A pool's FIFO of waiters in the memory store. Serving takes the head and enqueueing appends,
 * with no hashing: the index by slot id that a cancel needs is built at the first cancel and
 * dropped when the queue empties, so a queue that is only served never pays for it.
 *
 * Why parallel arrays, not one object per waiter: a burst can queue 100 000 waiters at once,
 * all of which outlive a few young-generation collections. Four array slots per waiter (the
 * times unboxed in arrays of doubles) are copied and marked far faster than a waiter object
 * with its boxed enqueue time.
 *
 * @example
 * ```ts
 * const queue = new WaiterQueue();
 * queue.push("w1", now, 5_000, caller);
 * if (queue.peek()) queue.headSlotId; // "w1"
 * queue.remove("w1"); // true: cancelled
 * ```
 */
export class WaiterQueue {
  /** Entries before `head` are cleared: a served waiter (and its token) is not kept alive. */
  private slotIds: (string | undefined)[] = [];
  /** The request's opaque `waiter`, handed back with the handoff. */
  private tokens: unknown[] = [];
  private enqueuedAts: number[] = [];
  private deadlines: number[] = [];
  private head = 0;
  private live = 0;
  /** Entries dropped from the front of the arrays so far: position = sequence − base. */
  private base = 0;
  /** Slot id → sequence number (position + base) of its entry. */
  private index: Map<string, number> | null = null;

  /** Live waiters. */
  get size(): number {
    return this.live;
  }

  /** Appends a waiter; its wait deadline is `enqueuedAt + waitMs`. */
  push(slotId: string, enqueuedAt: number, waitMs: number, token: unknown): void {
    this.index?.set(slotId, this.base + this.slotIds.length);
    this.slotIds.push(slotId);
    this.tokens.push(token);
    this.enqueuedAts.push(enqueuedAt);
    this.deadlines.push(enqueuedAt + waitMs);
    this.live++;
  }

  /** True when a live waiter heads the queue (then read it with the `head…` getters). */
  peek(): boolean {
    const ids = this.slotIds;
    while (this.head < ids.length) {
      if (ids[this.head] !== undefined) return true;
      this.head++;
    }
    return false;
  }

  /** The head's slot id (after {@link peek} answered true). */
  get headSlotId(): string {
    return this.slotIds[this.head]!;
  }

  get headEnqueuedAt(): number {
    return this.enqueuedAts[this.head]!;
  }

  get headDeadline(): number {
    return this.deadlines[this.head]!;
  }

  get headToken(): unknown {
    return this.tokens[this.head];
  }

  /** Takes out the waiter {@link peek} found. */
  shift(): void {
    const at = this.head;
    this.index?.delete(this.slotIds[at]!);
    this.slotIds[at] = undefined;
    this.tokens[at] = undefined;
    this.head++;
    this.live--;
    this.tidy();
  }

  /** Cancels a waiter; false when no live waiter has this id. */
  remove(slotId: string): boolean {
    if (this.live === 0) return false;
    const index = this.index ?? this.buildIndex();
    const sequence = index.get(slotId);
    if (sequence === undefined) return false;
    const at = sequence - this.base;
    index.delete(slotId);
    this.slotIds[at] = undefined;
    this.tokens[at] = undefined;
    this.live--;
    this.tidy();
    return true;
  }

  /** Live waiter ids, head first. */
  ids(): string[] {
    const ids: string[] = [];
    for (let i = this.head; i < this.slotIds.length; i++) {
      const id = this.slotIds[i];
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  private buildIndex(): Map<string, number> {
    const index = new Map<string, number>();
    for (let i = this.head; i < this.slotIds.length; i++) {
      const id = this.slotIds[i];
      if (id !== undefined) index.set(id, this.base + i);
    }
    this.index = index;
    return index;
  }

  /** Forgets served and cancelled entries: all of them when none is left, else the front half. */
  private tidy(): void {
    if (this.live === 0) {
      this.base += this.slotIds.length;
      this.slotIds = [];
      this.tokens = [];
      this.enqueuedAts = [];
      this.deadlines = [];
      this.head = 0;
      this.index = null;
    } else if (this.head > 1024 && this.head * 2 > this.slotIds.length) {
      const dropped = this.head;
      this.slotIds.splice(0, dropped);
      this.tokens.splice(0, dropped);
      this.enqueuedAts.splice(0, dropped);
      this.deadlines.splice(0, dropped);
      this.base += dropped;
      this.head = 0;
    }
  }
}
