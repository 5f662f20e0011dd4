import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMetricsPersistence } from "../../adapters/server/metrics-persistence.js";
import { openSluiceDatabase, SqliteMetricsStore } from "../../adapters/sqlite/index.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import type { CatalogStore } from "../../src/catalog/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { MetricsRecorder } from "../../src/metrics/recorder.js";
import { poolInput } from "./fixtures.js";

const DAY_MS = 86_400_000;
const NO_POOLS = { listAllPools: () => [] };

describe("metrics persistence (real SQLite)", () => {
  let dir: string;
  let database: Database.Database;
  let clock: ManualClock;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sluice-metrics-"));
    database = openSluiceDatabase(join(dir, "sluice.db"), { busyTimeoutMs: 0 });
    clock = new ManualClock(Date.UTC(2030, 0, 10));
  });

  afterEach(() => {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A server's persistence of `recorder` on the shared test database. */
  const persistenceOf = (
    recorder: MetricsRecorder,
    catalog: Pick<CatalogStore, "listAllPools"> = NO_POOLS,
  ) =>
    createMetricsPersistence({ recorder, store: new SqliteMetricsStore(database), catalog, clock });

  it("two servers on one database add up: each writes only what it counted since its last flush", () => {
    const servers = [0, 1].map(() => {
      const recorder = new MetricsRecorder();
      const persistence = persistenceOf(recorder);
      persistence.load();
      return { meter: recorder.forPool("chat"), persistence };
    });
    for (const round of [1, 2]) {
      for (const [index, server] of servers.entries()) {
        for (let n = 0; n < 10 * (index + 1); n++) server.meter.request(clock.now());
        server.persistence.flush();
      }
      expect(new SqliteMetricsStore(database).loadBuckets(0)[0]?.requests).toBe(30 * round);
    }
    // A restarted server loads the sum, and adds on top of it.
    const recorder = new MetricsRecorder();
    const catalog = new MemoryCatalogStore({ clock: new ManualClock(0) });
    catalog.upsertPool(catalog.createTeam({ name: "A", slug: "a" }).id, poolInput("chat"));
    const restarted = persistenceOf(recorder, catalog);
    restarted.load();
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(60);
    recorder.forPool("chat").request(clock.now());
    restarted.flush();
    expect(new SqliteMetricsStore(database).loadBuckets(0)[0]?.requests).toBe(61);
  });

  it("saves what the recorder counted, and a new recorder loads it back", () => {
    const recorder = new MetricsRecorder();
    const persistence = persistenceOf(recorder);
    const meter = recorder.forPool("chat");
    meter.request(clock.now());
    meter.admitted(clock.now(), 0);
    meter.request(clock.now());
    meter.rejected(clock.now());
    expect(persistence.flush()).toBe(1);
    expect(persistence.flush()).toBe(0);

    const restored = new MetricsRecorder();
    const catalog = new MemoryCatalogStore({ clock });
    const team = catalog.createTeam({ name: "Acme", slug: "acme" });
    catalog.upsertPool(team.id, poolInput("chat"));
    const loaded = createMetricsPersistence({
      recorder: restored,
      store: new SqliteMetricsStore(database),
      catalog,
      clock,
    }).load();
    expect(loaded).toBe(1);
    expect(restored.totals("chat", 0, Number.POSITIVE_INFINITY)).toMatchObject({
      requests: 2,
      admitted: 1,
      rejected: 1,
    });
  });

  it("flushes on its interval once started, and stops", async () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const persistence = createMetricsPersistence({ recorder, store, catalog: NO_POOLS, clock });
    persistence.start(5_000);
    recorder.forPool("chat").request(clock.now());
    await clock.advance(4_999);
    expect(store.loadBuckets(0)).toHaveLength(0);
    await clock.advance(1);
    expect(store.loadBuckets(0)).toHaveLength(1);
    persistence.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("keeps buckets whose save failed and writes them on the next flush", () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const persistence = createMetricsPersistence({ recorder, store, catalog: NO_POOLS, clock });
    recorder.forPool("chat").request(clock.now());

    // Another connection holds the write lock: the save fails at once (busy timeout 0).
    const other = openSluiceDatabase(join(dir, "sluice.db"));
    other.exec("BEGIN IMMEDIATE");
    expect(() => persistence.flush()).toThrow();
    other.exec("COMMIT");
    other.close();

    expect(persistence.flush()).toBe(1);
    expect(store.loadBuckets(0)[0]).toMatchObject({ pool: "chat", requests: 1 });
  });

  it("prunes past the longest pool retention, in memory and on disk", () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const catalog = new MemoryCatalogStore({ clock });
    const persistence = createMetricsPersistence({ recorder, store, catalog, clock });
    recorder.forPool("chat").request(clock.now() - 40 * DAY_MS);
    recorder.forPool("chat").request(clock.now() - 10 * DAY_MS);
    persistence.flush();

    // A pool keeping 60 days keeps both.
    const team = catalog.createTeam({ name: "Acme", slug: "acme" });
    const pool = catalog.upsertPool(team.id, poolInput("chat", { metricsRetentionDays: 60 }));
    expect(persistence.prune()).toBe(0);
    expect(store.loadBuckets(0)).toHaveLength(2);

    // No pools: the default retention of 30 days applies.
    catalog.deletePool(team.id, pool.id);
    expect(persistence.prune()).toBe(1);
    expect(store.loadBuckets(0)).toHaveLength(1);
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(1);
  });
  it("prunes each pool's buckets on disk at its own retention, not only the longest", () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const catalog = new MemoryCatalogStore({ clock });
    const persistence = createMetricsPersistence({ recorder, store, catalog, clock });
    const team = catalog.createTeam({ name: "Acme", slug: "acme" });
    catalog.upsertPool(team.id, poolInput("chat", { metricsRetentionDays: 7 }));
    catalog.upsertPool(team.id, poolInput("embed", { metricsRetentionDays: 60 }));
    for (const pool of ["chat", "embed"]) {
      recorder.forPool(pool).request(clock.now() - 10 * DAY_MS);
      recorder.forPool(pool).request(clock.now() - 3 * DAY_MS);
    }
    persistence.flush();

    // chat keeps 7 days: its bucket of 10 days ago goes; embed keeps 60 days: both stay.
    expect(persistence.prune()).toBe(1);
    const kept = store.loadBuckets(0).map((bucket) => [bucket.pool, bucket.start]);
    expect(kept).toEqual([
      ["chat", clock.now() - 3 * DAY_MS],
      ["embed", clock.now() - 10 * DAY_MS],
      ["embed", clock.now() - 3 * DAY_MS],
    ]);
    expect(persistence.prune()).toBe(0);
  });

  it("loads only the history of pools in the catalog, from the minute they were created", async () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const catalog = new MemoryCatalogStore({ clock });
    const persistence = createMetricsPersistence({ recorder, store, catalog, clock });
    // "chat" and "gone" served traffic an hour ago; both pools were deleted since.
    recorder.forPool("chat").request(clock.now() - 3_600_000);
    recorder.forPool("gone").request(clock.now() - 3_600_000);
    await clock.advance(30_000);
    // Now another team creates a new "chat", which serves traffic in its first minute.
    const globex = catalog.createTeam({ name: "Globex", slug: "globex" });
    catalog.upsertPool(globex.id, poolInput("chat"));
    recorder.forPool("chat").request(clock.now());
    persistence.flush();
    expect(store.loadBuckets(0)).toHaveLength(3);

    const restored = new MetricsRecorder();
    const loaded = createMetricsPersistence({ recorder: restored, store, catalog, clock }).load();
    expect(loaded).toBe(1);
    expect(restored.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(1);
    expect(restored.totals("gone", 0, Number.POSITIVE_INFINITY).requests).toBe(0);
  });

  it("forgets a removed pool in memory and on disk, including counts not yet saved", () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const persistence = createMetricsPersistence({ recorder, store, catalog: NO_POOLS, clock });
    recorder.forPool("chat").request(clock.now() - 120_000);
    recorder.forPool("embed").request(clock.now());
    persistence.flush();
    recorder.forPool("chat").request(clock.now());

    expect(persistence.forgetPool("chat")).toBe(2);
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(0);
    expect(persistence.flush()).toBe(0);
    expect(store.loadBuckets(0).map((bucket) => bucket.pool)).toEqual(["embed"]);
  });
});
