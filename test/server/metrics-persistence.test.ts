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
import { emptyMetricCounts } from "../../src/metrics/types.js";
import { poolInput } from "./fixtures.js";

const DAY_MS = 86_400_000;
const NO_POOLS = { listAllPools: async () => [] };

describe("metrics persistence (real SQLite)", () => {
  let dir: string;
  let database: Database.Database;
  let clock: ManualClock;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-metrics-"));
    database = openSluiceDatabase(join(dir, "sluice.db"), { busyTimeoutMs: 0 });
    clock = new ManualClock(Date.UTC(2030, 0, 10));
  });

  afterEach(async () => {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A server's persistence of `recorder` on the shared test database. */
  const persistenceOf = (
    recorder: MetricsRecorder,
    catalog: Pick<CatalogStore, "listAllPools"> = NO_POOLS,
  ) =>
    createMetricsPersistence({ recorder, store: new SqliteMetricsStore(database), catalog, clock });

  it("two servers on one database add up: each writes only what it counted since its last flush", async () => {
    const servers = await Promise.all(
      [0, 1].map(async () => {
        const recorder = new MetricsRecorder();
        const persistence = persistenceOf(recorder);
        await persistence.load();
        return { meter: recorder.forPool("chat"), persistence };
      }),
    );
    for (const round of [1, 2]) {
      for (const [index, server] of servers.entries()) {
        for (let n = 0; n < 10 * (index + 1); n++) server.meter.request(clock.now());
        await server.persistence.flush();
      }
      expect((await new SqliteMetricsStore(database).loadBuckets(0))[0]?.requests).toBe(30 * round);
    }
    // A restarted server loads the sum, and adds on top of it.
    const recorder = new MetricsRecorder();
    const catalog = new MemoryCatalogStore({ clock: new ManualClock(0) });
    await catalog.upsertPool(
      (await catalog.createTeam({ name: "A", slug: "a" })).id,
      poolInput("chat"),
    );
    const restarted = persistenceOf(recorder, catalog);
    await restarted.load();
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(60);
    recorder.forPool("chat").request(clock.now());
    await restarted.flush();
    expect((await new SqliteMetricsStore(database).loadBuckets(0))[0]?.requests).toBe(61);
  });

  it("each server's figures show the whole fleet's counts after its flush, which never writes them back", async () => {
    const catalog = new MemoryCatalogStore({ clock: new ManualClock(0) });
    const team = await catalog.createTeam({ name: "A", slug: "a" });
    for (const pool of ["chat", "embed"]) await catalog.upsertPool(team.id, poolInput(pool));
    const [a, b] = await Promise.all(
      [0, 1].map(async () => {
        const recorder = new MetricsRecorder();
        const persistence = persistenceOf(recorder, catalog);
        await persistence.load();
        return { recorder, meter: recorder.forPool("chat"), persistence };
      }),
    );
    const requests = (server: typeof a) =>
      server!.recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests;
    const stored = async () =>
      (await new SqliteMetricsStore(database).loadBuckets(0))
        .filter((bucket) => bucket.pool === "chat")
        .reduce((total, bucket) => total + bucket.requests, 0);
    for (let n = 0; n < 3; n++) a!.meter.request(clock.now());
    for (let n = 0; n < 5; n++) b!.meter.request(clock.now());
    // A minute only b served, and a pool a does not know (not defined on a: not folded there).
    b!.meter.request(clock.now() - 60_000);
    b!.recorder.forPool("embed").request(clock.now());
    await a!.persistence.flush();
    await b!.persistence.flush();
    await a!.persistence.flush();
    expect([requests(a), requests(b), await stored()]).toEqual([9, 9, 9]);
    expect(a!.recorder.buckets("chat", 0, Number.POSITIVE_INFINITY)).toHaveLength(2);
    expect(a!.recorder.totals("embed", 0, Number.POSITIVE_INFINITY).requests).toBe(0);
    // Rows of a pool no longer in the catalog (deleted while no server ran) are not its figures.
    await new SqliteMetricsStore(database).addBuckets([
      { ...emptyMetricCounts(), pool: "gone", start: clock.now(), requests: 7 },
    ]);
    a!.recorder.forPool("gone");
    await a!.persistence.flush();
    expect(a!.recorder.totals("gone", 0, Number.POSITIVE_INFINITY).requests).toBe(0);

    // Counts learned from the other server are not its own: the next flushes write only new events.
    a!.meter.request(clock.now());
    await a!.persistence.flush();
    await b!.persistence.flush();
    expect([requests(a), requests(b), await stored()]).toEqual([10, 10, 10]);
    await clock.advance(20 * 60_000);
    await a!.persistence.flush();
    await b!.persistence.flush();
    expect([requests(a), requests(b)]).toEqual([10, 10]);
  });

  it("a server that serves its store alone does not read it back at each flush", async () => {
    const catalog = new MemoryCatalogStore({ clock: new ManualClock(0) });
    const team = await catalog.createTeam({ name: "A", slug: "a" });
    await catalog.upsertPool(team.id, poolInput("chat"));
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const alone = createMetricsPersistence({ recorder, store, catalog, clock, sharedStore: false });
    await alone.load();
    recorder.forPool("chat").request(clock.now());
    // Rows it did not write (nobody else may write here): not folded in, not read at all.
    await store.addBuckets([
      { ...emptyMetricCounts(), pool: "chat", start: clock.now(), requests: 7 },
    ]);
    await alone.flush();
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(1);
  });

  it("saves what the recorder counted, and a new recorder loads it back", async () => {
    const recorder = new MetricsRecorder();
    const persistence = persistenceOf(recorder);
    const meter = recorder.forPool("chat");
    meter.request(clock.now());
    meter.admitted(clock.now(), 0);
    meter.request(clock.now());
    meter.rejected(clock.now());
    expect(await persistence.flush()).toBe(1);
    expect(await persistence.flush()).toBe(0);

    const restored = new MetricsRecorder();
    const catalog = new MemoryCatalogStore({ clock });
    const team = await catalog.createTeam({ name: "Acme", slug: "acme" });
    await catalog.upsertPool(team.id, poolInput("chat"));
    const loaded = await createMetricsPersistence({
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
    expect(await store.loadBuckets(0)).toHaveLength(0);
    await clock.advance(1);
    expect(await store.loadBuckets(0)).toHaveLength(1);
    persistence.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("keeps buckets whose save failed and writes them on the next flush", async () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const persistence = createMetricsPersistence({ recorder, store, catalog: NO_POOLS, clock });
    recorder.forPool("chat").request(clock.now());

    // Another connection holds the write lock: the save fails at once (busy timeout 0).
    const other = openSluiceDatabase(join(dir, "sluice.db"));
    other.exec("BEGIN IMMEDIATE");
    await expect(persistence.flush()).rejects.toThrow();
    other.exec("COMMIT");
    other.close();

    expect(await persistence.flush()).toBe(1);
    expect((await store.loadBuckets(0))[0]).toMatchObject({ pool: "chat", requests: 1 });
  });

  it("prunes past the longest pool retention, in memory and on disk", async () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const catalog = new MemoryCatalogStore({ clock });
    const persistence = createMetricsPersistence({ recorder, store, catalog, clock });
    recorder.forPool("chat").request(clock.now() - 40 * DAY_MS);
    recorder.forPool("chat").request(clock.now() - 10 * DAY_MS);
    await persistence.flush();

    // A pool keeping 60 days keeps both.
    const team = await catalog.createTeam({ name: "Acme", slug: "acme" });
    const pool = await catalog.upsertPool(team.id, poolInput("chat", { metricsRetentionDays: 60 }));
    expect(await persistence.prune()).toBe(0);
    expect(await store.loadBuckets(0)).toHaveLength(2);

    // No pools: the default retention of 30 days applies.
    await catalog.deletePool(team.id, pool.id);
    expect(await persistence.prune()).toBe(1);
    expect(await store.loadBuckets(0)).toHaveLength(1);
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(1);
  });
  it("prunes each pool's buckets on disk at its own retention, not only the longest", async () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const catalog = new MemoryCatalogStore({ clock });
    const persistence = createMetricsPersistence({ recorder, store, catalog, clock });
    const team = await catalog.createTeam({ name: "Acme", slug: "acme" });
    await catalog.upsertPool(team.id, poolInput("chat", { metricsRetentionDays: 7 }));
    await catalog.upsertPool(team.id, poolInput("embed", { metricsRetentionDays: 60 }));
    for (const pool of ["chat", "embed"]) {
      recorder.forPool(pool).request(clock.now() - 10 * DAY_MS);
      recorder.forPool(pool).request(clock.now() - 3 * DAY_MS);
    }
    await persistence.flush();

    // chat keeps 7 days: its bucket of 10 days ago goes; embed keeps 60 days: both stay.
    expect(await persistence.prune()).toBe(1);
    const kept = (await store.loadBuckets(0)).map((bucket) => [bucket.pool, bucket.start]);
    expect(kept).toEqual([
      ["chat", clock.now() - 3 * DAY_MS],
      ["embed", clock.now() - 10 * DAY_MS],
      ["embed", clock.now() - 3 * DAY_MS],
    ]);
    expect(await persistence.prune()).toBe(0);
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
    const globex = await catalog.createTeam({ name: "Globex", slug: "globex" });
    await catalog.upsertPool(globex.id, poolInput("chat"));
    recorder.forPool("chat").request(clock.now());
    await persistence.flush();
    expect(await store.loadBuckets(0)).toHaveLength(3);

    const restored = new MetricsRecorder();
    const loaded = await createMetricsPersistence({
      recorder: restored,
      store,
      catalog,
      clock,
    }).load();
    expect(loaded).toBe(1);
    expect(restored.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(1);
    expect(restored.totals("gone", 0, Number.POSITIVE_INFINITY).requests).toBe(0);
  });

  it("forgets a removed pool in memory and on disk, including counts not yet saved", async () => {
    const recorder = new MetricsRecorder();
    const store = new SqliteMetricsStore(database);
    const persistence = createMetricsPersistence({ recorder, store, catalog: NO_POOLS, clock });
    recorder.forPool("chat").request(clock.now() - 120_000);
    recorder.forPool("embed").request(clock.now());
    await persistence.flush();
    recorder.forPool("chat").request(clock.now());

    expect(await persistence.forgetPool("chat")).toBe(2);
    expect(recorder.totals("chat", 0, Number.POSITIVE_INFINITY).requests).toBe(0);
    expect(await persistence.flush()).toBe(0);
    expect((await store.loadBuckets(0)).map((bucket) => bucket.pool)).toEqual(["embed"]);
  });
});
