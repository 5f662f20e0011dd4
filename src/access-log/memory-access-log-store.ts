import type { AccessLogEntry, AccessLogStore, ResolvedAccessLogQuery } from "./types.js";

/**
 * The reference {@link AccessLogStore}: one array per pool, no I/O. Entries are copied in
 * and out, so callers never share state with the store.
 *
 * @example
 * ```ts
 * const accessLog = new BufferedAccessLog({ store: new MemoryAccessLogStore(), clock });
 * ```
 */
export class MemoryAccessLogStore implements AccessLogStore {
  private readonly byPool = new Map<string, AccessLogEntry[]>();

  async insert(entries: readonly AccessLogEntry[]): Promise<void> {
    for (const entry of entries) {
      let list = this.byPool.get(entry.pool);
      if (!list) {
        list = [];
        this.byPool.set(entry.pool, list);
      }
      list.push({ ...entry });
    }
  }

  async list(pool: string, query: ResolvedAccessLogQuery): Promise<AccessLogEntry[]> {
    const matching = (this.byPool.get(pool) ?? []).filter(
      (entry) => entry.at >= query.from && entry.at < query.to,
    );
    // Stable sort keeps insertion order among equal times, reversed below with the rest.
    matching.sort((a, b) => a.at - b.at);
    const newestFirst: AccessLogEntry[] = [];
    for (let i = matching.length - 1; i >= 0 && newestFirst.length < query.limit; i--) {
      newestFirst.push({ ...(matching[i] as AccessLogEntry) });
    }
    return newestFirst;
  }

  async pruneBefore(pool: string, beforeMs: number): Promise<number> {
    const list = this.byPool.get(pool);
    if (!list) return 0;
    const kept = list.filter((entry) => entry.at >= beforeMs);
    this.byPool.set(pool, kept);
    return list.length - kept.length;
  }

  async deletePool(pool: string): Promise<number> {
    const deleted = this.byPool.get(pool)?.length ?? 0;
    this.byPool.delete(pool);
    return deleted;
  }
}
