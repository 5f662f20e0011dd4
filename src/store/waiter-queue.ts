/** One queued acquire in the memory store. */
export class Waiter {
  /** False once served, cancelled or dropped: the queue skips it. */
  live = true;

  constructor(
    readonly slotId: string,
    readonly enqueuedAt: number,
    /** The wait budget (ms): a small integer, so no number box per waiter as a deadline needs. */
    readonly waitMs: number,
    /** The request's opaque `waiter`, handed back with the handoff. */
    readonly token: unknown,
  ) {}

  get waitDeadline(): number {
    return this.enqueuedAt + this.waitMs;
  }
}

/**
 * A pool's FIFO of waiters. Serving takes the head and enqueueing appends, with no hashing:
 * the index by slot id that a cancel needs is built at the first cancel and dropped when the
 * queue empties, so a queue that is only served never pays for it.
 *
 * @example
 * ```ts
 * const queue = new WaiterQueue();
 * queue.push(new Waiter("w1", now, 5_000, caller));
 * const head = queue.peek(); // w1
 * queue.remove("w1"); // true: cancelled
 * ```
 */
export class WaiterQueue {
  /** Entries before `head` are cleared: a served waiter (and its caller) is not kept alive. */
  private items: (Waiter | undefined)[] = [];
  private head = 0;
  private live = 0;
  private index: Map<string, Waiter> | null = null;

  /** Live waiters. */
  get size(): number {
    return this.live;
  }

  push(waiter: Waiter): void {
    this.items.push(waiter);
    this.live++;
    this.index?.set(waiter.slotId, waiter);
  }

  /** The first live waiter, or undefined when none waits. */
  peek(): Waiter | undefined {
    const items = this.items;
    while (this.head < items.length) {
      const head = items[this.head]!;
      if (head.live) return head;
      items[this.head] = undefined;
      this.head++;
    }
    return undefined;
  }

  /** Takes out the waiter {@link peek} returned. */
  shift(): void {
    const head = this.items[this.head]!;
    head.live = false;
    this.index?.delete(head.slotId);
    this.items[this.head] = undefined;
    this.head++;
    this.live--;
    this.tidy();
  }

  /** Cancels a waiter; false when no live waiter has this id. */
  remove(slotId: string): boolean {
    if (this.live === 0) return false;
    const index = this.index ?? this.buildIndex();
    const waiter = index.get(slotId);
    if (!waiter) return false;
    waiter.live = false;
    index.delete(slotId);
    this.live--;
    this.tidy();
    return true;
  }

  /** Live waiter ids, head first. */
  ids(): string[] {
    const ids: string[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const waiter = this.items[i]!;
      if (waiter.live) ids.push(waiter.slotId);
    }
    return ids;
  }

  private buildIndex(): Map<string, Waiter> {
    const index = new Map<string, Waiter>();
    for (let i = this.head; i < this.items.length; i++) {
      const waiter = this.items[i]!;
      if (waiter.live) index.set(waiter.slotId, waiter);
    }
    this.index = index;
    return index;
  }

  /** Forgets served and cancelled entries: all of them when none is left, else the front half. */
  private tidy(): void {
    if (this.live === 0) {
      this.items = [];
      this.head = 0;
      this.index = null;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
  }
}
