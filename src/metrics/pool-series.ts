import { BucketCell } from "./bucket-cell.js";

/**
 * The buckets of one pool, kept sorted by start so range queries are a binary search and a
 * scan. Time mostly moves forward, so a new bucket is nearly always an append; the map makes
 * the once-a-minute "find or create" O(1) even when the clock steps back.
 */
export class PoolSeries {
  /** Ascending by `start`, no duplicates. */
  readonly cells: BucketCell[] = [];
  private readonly byStart = new Map<number, BucketCell>();

  constructor(readonly pool: string) {}

  /** The bucket starting at `start`, created empty when missing. */
  cellAt(start: number): BucketCell {
    const found = this.byStart.get(start);
    if (found !== undefined) return found;
    const cell = new BucketCell(this.pool, start);
    this.byStart.set(start, cell);
    const last = this.cells[this.cells.length - 1];
    if (last === undefined || last.start < start) this.cells.push(cell);
    else this.cells.splice(this.firstIndexAtOrAfter(start), 0, cell);
    return cell;
  }

  /** Index of the first bucket whose start is ≥ `start` (length when none). */
  firstIndexAtOrAfter(start: number): number {
    let low = 0;
    let high = this.cells.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.cells[middle]!.start < start) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Drops every bucket starting before `start`; returns how many went. */
  dropBefore(start: number): number {
    const count = this.firstIndexAtOrAfter(start);
    for (let index = 0; index < count; index++) this.byStart.delete(this.cells[index]!.start);
    if (count > 0) this.cells.splice(0, count);
    return count;
  }
}
