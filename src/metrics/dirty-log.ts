import type { BucketCell } from "./bucket-cell.js";
import type { MetricsBucket } from "./types.js";

/**
 * Buckets changed since the last drain. A cell enters once (when its `dirty` flag flips), so
 * recording costs one boolean test per event rather than a Set insertion.
 */
export class DirtyLog {
  private cells: BucketCell[] = [];

  mark(cell: BucketCell): void {
    cell.dirty = true;
    this.cells.push(cell);
  }

  drain(): MetricsBucket[] {
    const copies = new Array<MetricsBucket>(this.cells.length);
    for (let index = 0; index < this.cells.length; index++) {
      const cell = this.cells[index]!;
      cell.dirty = false;
      copies[index] = cell.snapshot();
    }
    this.cells.length = 0;
    return copies;
  }

  /** Forgets pruned buckets so a drain never resurrects rows the adapter is deleting. */
  discardBefore(start: number): void {
    this.cells = this.cells.filter((cell) => {
      if (cell.start >= start) return true;
      cell.dirty = false;
      return false;
    });
  }
}
