/**
 * A binary min-heap keyed by a number. Used for deadlines (waiter timeouts) so one timer
 * serves any number of waiters instead of one timer each.
 *
 * @example
 * ```ts
 * const heap = new MinHeap<string>();
 * heap.push(30, "late"); heap.push(10, "early");
 * heap.peekKey(); // 10
 * ```
 */
export class MinHeap<T> {
  private keys: number[] = [];
  private values: T[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(key: number, value: T): void {
    this.keys.push(key);
    this.values.push(value);
    this.siftUp(this.keys.length - 1);
  }

  /** Smallest key, or undefined when empty. */
  peekKey(): number | undefined {
    return this.keys[0];
  }

  peek(): T | undefined {
    return this.values[0];
  }

  pop(): T | undefined {
    const size = this.keys.length;
    if (size === 0) return undefined;
    const top = this.values[0];
    const lastKey = this.keys.pop()!;
    const lastValue = this.values.pop()!;
    if (size > 1) {
      this.keys[0] = lastKey;
      this.values[0] = lastValue;
      this.siftDown(0);
    }
    return top;
  }

  clear(): void {
    this.keys.length = 0;
    this.values.length = 0;
  }

  private siftUp(index: number): void {
    const { keys, values } = this;
    const key = keys[index]!;
    const value = values[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (keys[parent]! <= key) break;
      keys[index] = keys[parent]!;
      values[index] = values[parent]!;
      index = parent;
    }
    keys[index] = key;
    values[index] = value;
  }

  private siftDown(index: number): void {
    const { keys, values } = this;
    const size = keys.length;
    const key = keys[index]!;
    const value = values[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && keys[right]! < keys[left]! ? right : left;
      if (keys[child]! >= key) break;
      keys[index] = keys[child]!;
      values[index] = values[child]!;
      index = child;
    }
    keys[index] = key;
    values[index] = value;
  }
}
