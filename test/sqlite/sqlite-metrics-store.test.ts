import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteMetricsStore } from "../../adapters/sqlite/sqlite-metrics-store.js";
import { MetricsRecorder } from "../../src/metrics/recorder.js";
import type { MetricsBucket } from "../../src/metrics/types.js";
import { tempDirs } from "./temp-dir.js";

const dirs = tempDirs();
const open: { close(): void }[] = [];
afterEach(async () => {
  for (const handle of open.splice(0)) handle.close();
  dirs.cleanup();
});

function database(filename = join(dirs.make(), "sluice.db")) {
  const db = openSluiceDatabase(filename);
  open.push(db);
  return { db, filename };
}

function bucket(pool: string, start: number, requests: number): MetricsBucket {
  return {
    pool,
    start,
    requests,
    admitted: requests - 1,
    queued: 2,
    rejected: 1,
    timedOut: 0,
    throttled: 3,
    released: requests - 1,
    queueWaitMs: 1_500,
    holdMs: 98_765,
  };
}

describe("SqliteMetricsStore", () => {
  it("saves and loads buckets with every count, ordered by pool then start", async () => {
    const { db } = database();
    const store = new SqliteMetricsStore(db);
    const saved = [bucket("b", 60_000, 5), bucket("a", 120_000, 7), bucket("a", 60_000, 9)];
    await store.saveBuckets(saved);
    expect(await store.loadBuckets(0)).toEqual([saved[2], saved[1], saved[0]]);
    expect(await store.loadBuckets(120_000)).toEqual([saved[1]]);
  });

  it("replaces a bucket saved again (counts are totals, not increments)", async () => {
    const { db } = database();
    const store = new SqliteMetricsStore(db);
    await store.saveBuckets([bucket("a", 0, 5)]);
    await store.saveBuckets([bucket("a", 0, 8)]);
    expect(await store.loadBuckets(0)).toEqual([bucket("a", 0, 8)]);
  });

  it("prunes buckets starting before a time", async () => {
    const { db } = database();
    const store = new SqliteMetricsStore(db);
    await store.saveBuckets([bucket("a", 0, 2), bucket("a", 60_000, 2), bucket("b", 120_000, 2)]);
    expect(await store.pruneBefore(60_000)).toBe(1);
    expect((await store.loadBuckets(0)).map((b) => b.start)).toEqual([60_000, 120_000]);
    expect(await store.pruneBefore(60_000)).toBe(0);
  });

  it("carries a recorder's history across a restart", async () => {
    const { db, filename } = database();
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    for (let i = 0; i < 5; i++) meter.request(61_000 + i);
    meter.admitted(61_000, 250);
    meter.released(125_000, 4_000);
    await new SqliteMetricsStore(db).saveBuckets(recorder.drainDirty());
    meter.request(125_500);
    await new SqliteMetricsStore(db).saveBuckets(recorder.drainDirty());
    db.close();

    const reopened = database(filename).db;
    const restored = new MetricsRecorder();
    restored.load(await new SqliteMetricsStore(reopened).loadBuckets(0));
    expect(restored.totals("llm", 0, 200_000)).toEqual(recorder.totals("llm", 0, 200_000));
    expect(restored.totals("llm", 0, 200_000).requests).toBe(6);
  });

  it("does nothing for an empty batch", async () => {
    const { db } = database();
    const store = new SqliteMetricsStore(db);
    await store.saveBuckets([]);
    expect(await store.loadBuckets(0)).toEqual([]);
  });
});
