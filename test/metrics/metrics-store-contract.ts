import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MetricsStore } from "../../src/metrics/metrics-store.js";
import { emptyMetricCounts, type MetricsBucket } from "../../src/metrics/types.js";

/** Opens an empty store; `close` ends what it opened. */
export type MetricsStoreFactory = () => Promise<{ store: MetricsStore; close(): Promise<void> }>;

function bucket(pool: string, start: number, requests: number): MetricsBucket {
  return {
    pool,
    start,
    ...emptyMetricCounts(),
    requests,
    admitted: requests,
    holdMs: 10 * requests,
  };
}

/**
 * The behaviour every {@link MetricsStore} must have (SQLite, PostgreSQL): what several servers
 * add to one bucket adds up, and pruning and pool deletion remove exactly what they say.
 */
export function describeMetricsStoreContract(name: string, factory: MetricsStoreFactory): void {
  describe(`MetricsStore contract: ${name}`, () => {
    let store: MetricsStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ store, close } = await factory());
    });
    afterEach(() => close());

    it("adds increments to a bucket instead of replacing it, and loads by pool then start", async () => {
      await store.addBuckets([bucket("b", 60_000, 2), bucket("a", 120_000, 1)]);
      await store.addBuckets([bucket("b", 60_000, 3)]);
      await store.addBuckets([bucket("a", 60_000, 4)]);
      expect(await store.loadBuckets(0)).toEqual([
        bucket("a", 60_000, 4),
        bucket("a", 120_000, 1),
        bucket("b", 60_000, 5),
      ]);
      expect(await store.loadBuckets(120_000)).toEqual([bucket("a", 120_000, 1)]);
    });

    it("adds up concurrent batches from several writers", async () => {
      await Promise.all(
        Array.from({ length: 10 }, (_, index) => store.addBuckets([bucket("chat", 0, index + 1)])),
      );
      expect(await store.loadBuckets(0)).toEqual([bucket("chat", 0, 55)]);
    });

    it("prunes before a time (of every pool or one) and deletes one pool's buckets", async () => {
      await store.addBuckets([
        bucket("a", 0, 1),
        bucket("a", 60_000, 1),
        bucket("b", 0, 1),
        bucket("b", 60_000, 1),
        bucket("c", 0, 1),
      ]);
      expect(await store.pruneBefore(60_000, "a")).toBe(1);
      expect(await store.deletePool("b")).toBe(2);
      expect(await store.pruneBefore(60_000)).toBe(1);
      expect(await store.loadBuckets(0)).toEqual([bucket("a", 60_000, 1)]);
    });
  });
}
