import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { BufferedAccessLog } from "../../src/access-log/buffered-access-log.js";
import { MemoryAccessLogStore } from "../../src/access-log/memory-access-log-store.js";
import { retentionOfPools, startAccessLogRetention } from "../../src/access-log/retention.js";
import type { AccessLogStore } from "../../src/access-log/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { postgresFixture } from "../postgres/pg-fixture.js";
import { requirePostgres } from "../support/postgres.js";
import { accessLogEntry } from "./access-log-entry.js";

const DAY = 86_400_000;

const entry = accessLogEntry;

const postgresAvailable = await requirePostgres("the PostgreSQL access log store");
const postgres = postgresFixture("pg_access_log");
afterAll(() => postgres.drop());

type OpenStore = () => Promise<{ store: AccessLogStore; close: () => Promise<void> | void }>;
const STORES: [string, OpenStore][] = [
  ["memory", async () => ({ store: new MemoryAccessLogStore(), close: () => {} })],
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "sluice-access-"));
      const db: Database.Database = openSluiceDatabase(join(dir, "sluice.db"));
      return {
        store: new SqliteAccessLogStore(db),
        close: () => {
          db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];
if (postgresAvailable) {
  STORES.push([
    "postgres",
    async () => {
      const catalog = await postgres.open();
      return { store: catalog.accessLog, close: () => catalog.close() };
    },
  ]);
}

describe.each(STORES)("%s access log store", (_name, open) => {
  let store: AccessLogStore;
  let close: () => Promise<void> | void;
  beforeEach(async () => {
    ({ store, close } = await open());
  });
  afterEach(async () => close());

  it("lists a pool's entries in [from, to), newest first, up to the limit", async () => {
    await store.insert([
      entry({ at: 100, outcome: "admitted" }),
      entry({ at: 200, outcome: "rejected", reason: "rpm" }),
      entry({ at: 300, outcome: "queued", queuedMs: 40 }),
      entry({ at: 250, pool: "other" }),
    ]);
    const range = { from: 100, to: 300, limit: 10 };
    expect((await store.list("llm", range)).map((e) => e.at)).toEqual([200, 100]);
    expect((await store.list("llm", { from: 0, to: 1_000, limit: 2 })).map((e) => e.at)).toEqual([
      300, 200,
    ]);
    expect((await store.list("llm", { from: 0, to: 1_000, limit: 10 }))[1]).toEqual(
      entry({ at: 200, outcome: "rejected", reason: "rpm" }),
    );
  });

  it("stores a caller policy's refusal with the policy as its reason", async () => {
    const refusal = entry({ at: 100, outcome: "refused", reason: "ip_allowlist" });
    await store.insert([refusal]);
    expect(await store.list("llm", { from: 0, to: 1_000, limit: 10 })).toEqual([refusal]);
  });

  it("stores the upstream's status of a proxied call, and null where there was no answer", async () => {
    const throttled = entry({ at: 300, source: "proxy", upstreamStatus: 429 });
    const answered = entry({ at: 200, source: "proxy", upstreamStatus: 200 });
    const unanswered = entry({ at: 100, source: "proxy", outcome: "timed_out", queuedMs: 500 });
    await store.insert([unanswered, answered, throttled]);
    const listed = await store.list("llm", { from: 0, to: 1_000, limit: 10 });
    expect(listed).toEqual([throttled, answered, unanswered]);
    expect(listed.map((e) => e.upstreamStatus)).toEqual([429, 200, null]);
  });

  it("prunes one pool's entries older than a cutoff", async () => {
    await store.insert([entry({ at: 100 }), entry({ at: 200 }), entry({ at: 100, pool: "other" })]);
    expect(await store.pruneBefore("llm", 150)).toBe(1);
    expect((await store.list("llm", { from: 0, to: 1_000, limit: 10 })).map((e) => e.at)).toEqual([
      200,
    ]);
    expect(await store.list("other", { from: 0, to: 1_000, limit: 10 })).toHaveLength(1);
  });

  it("deletes every entry of one pool, and only that pool's", async () => {
    await store.insert([entry({ at: 100 }), entry({ at: 200 }), entry({ at: 100, pool: "other" })]);
    expect(await store.deletePool("llm")).toBe(2);
    expect(await store.list("llm", { from: 0, to: 1_000, limit: 10 })).toEqual([]);
    expect(await store.list("other", { from: 0, to: 1_000, limit: 10 })).toHaveLength(1);
    expect(await store.deletePool("llm")).toBe(0);
    // The subdomain is usable again: a new pool's entries start from nothing.
    await store.insert([entry({ at: 300 })]);
    expect((await store.list("llm", { from: 0, to: 1_000, limit: 10 })).map((e) => e.at)).toEqual([
      300,
    ]);
  });
});

describe("BufferedAccessLog", () => {
  it("writes in batches off the request path: nothing reaches the store until the timer", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryAccessLogStore();
    const log = new BufferedAccessLog({ store, clock, flushIntervalMs: 1_000 });
    log.append(entry({ at: 1 }));
    log.append(entry({ at: 2 }));
    expect(await store.list("llm", { from: 0, to: 10, limit: 10 })).toEqual([]);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_000);
    expect(await store.list("llm", { from: 0, to: 10, limit: 10 })).toHaveLength(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it("a full batch is written on the next tick; list() sees every earlier append", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryAccessLogStore();
    const log = new BufferedAccessLog({ store, clock, batchSize: 3 });
    for (let i = 0; i < 3; i++) log.append(entry({ at: i }));
    await clock.advance(0);
    expect(await store.list("llm", { from: 0, to: 10, limit: 10 })).toHaveLength(3);
    log.append(entry({ at: 5 }));
    expect((await log.list("llm")).map((e) => e.at)).toEqual([5, 2, 1, 0]);
  });

  it("keeps a failed batch for the next try, and drops appends after close", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryAccessLogStore();
    let failing = true;
    const errors: unknown[] = [];
    const store: AccessLogStore = {
      insert: async (entries) => {
        if (failing) throw new Error("database is locked");
        await inner.insert(entries);
      },
      list: (pool, query) => inner.list(pool, query),
      pruneBefore: (pool, before) => inner.pruneBefore(pool, before),
      deletePool: (pool) => inner.deletePool(pool),
    };
    const log = new BufferedAccessLog({ store, clock, onError: (e) => errors.push(e) });
    log.append(entry({ at: 1 }));
    await clock.advance(1_000);
    expect(errors).toHaveLength(1);
    expect(log.pending).toBe(1);
    failing = false;
    await clock.advance(1_000);
    expect(await inner.list("llm", { from: 0, to: 10, limit: 10 })).toHaveLength(1);
    await log.close();
    log.append(entry({ at: 2 }));
    expect(log.dropped).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it("writes a long batch in parts, one per event-loop turn, so requests are served between them", async () => {
    const inner = new MemoryAccessLogStore();
    const events: string[] = [];
    const store: AccessLogStore = {
      insert: async (entries) => {
        events.push(`insert ${entries.length}`);
        // Another request's callback, queued while this part is written.
        setImmediate(() => events.push("request"));
        await inner.insert(entries);
      },
      list: (pool, query) => inner.list(pool, query),
      pruneBefore: (pool, before) => inner.pruneBefore(pool, before),
      deletePool: (pool) => inner.deletePool(pool),
    };
    const log = new BufferedAccessLog({ store, clock: new ManualClock(0), writeChunkSize: 64 });
    for (let i = 0; i < 150; i++) log.append(entry({ at: i }));
    await log.flush();
    expect(events.slice(0, 5)).toEqual([
      "insert 64",
      "request",
      "insert 64",
      "request",
      "insert 22",
    ]);
    const stored = await inner.list("llm", { from: 0, to: 1_000, limit: 1_000 });
    expect(stored.map((e) => e.at)).toEqual(Array.from({ length: 150 }, (_, i) => 149 - i));
  });

  it("a part that fails is kept with the rest of its batch, in order; written parts are not written again", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryAccessLogStore();
    let calls = 0;
    const errors: unknown[] = [];
    const store: AccessLogStore = {
      insert: async (entries) => {
        calls++;
        if (calls === 2) throw new Error("database is locked");
        await inner.insert(entries);
      },
      list: (pool, query) => inner.list(pool, query),
      pruneBefore: (pool, before) => inner.pruneBefore(pool, before),
      deletePool: (pool) => inner.deletePool(pool),
    };
    const log = new BufferedAccessLog({
      store,
      clock,
      writeChunkSize: 10,
      onError: (e) => errors.push(e),
    });
    for (let i = 0; i < 25; i++) log.append(entry({ at: i }));
    await log.flush();
    expect(errors).toHaveLength(1);
    expect(log.pending).toBe(15);
    log.append(entry({ at: 25 }));
    await log.close();
    const stored = await inner.list("llm", { from: 0, to: 1_000, limit: 1_000 });
    expect(stored.map((e) => e.at)).toEqual(Array.from({ length: 26 }, (_, i) => 25 - i));
    expect(log.dropped).toBe(0);
  });

  it("forgets a pool's entries, stored and still buffered, and keeps other pools'", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryAccessLogStore();
    const log = new BufferedAccessLog({ store, clock });
    log.append(entry({ at: 1 }));
    log.append(entry({ at: 1, pool: "other" }));
    await log.flush();
    log.append(entry({ at: 2 }));
    log.append(entry({ at: 2, pool: "other" }));
    expect(await log.forgetPool("llm")).toBe(2);
    expect(log.pending).toBe(1);
    expect(await log.list("llm")).toEqual([]);
    expect((await log.list("other")).map((e) => e.at)).toEqual([2, 1]);
    expect(log.dropped).toBe(0);
  });

  it("forgets buffered entries even when deleting the stored ones fails", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryAccessLogStore();
    const store: AccessLogStore = {
      insert: (entries) => inner.insert(entries),
      list: (pool, query) => inner.list(pool, query),
      pruneBefore: (pool, before) => inner.pruneBefore(pool, before),
      deletePool: () => {
        throw new Error("database is locked");
      },
    };
    const log = new BufferedAccessLog({ store, clock });
    log.append(entry({ at: 1 }));
    await expect(log.forgetPool("llm")).rejects.toThrow("database is locked");
    await log.flush();
    expect(await inner.list("llm", { from: 0, to: 10, limit: 10 })).toEqual([]);
  });

  it("reads a pool's log from the pool's creation on, and nothing for a pool that does not exist", async () => {
    const clock = new ManualClock(0);
    const createdAt = new Map([["llm", 200]]);
    const log = new BufferedAccessLog({
      store: new MemoryAccessLogStore(),
      clock,
      poolCreatedAt: (pool) => createdAt.get(pool),
    });
    // Entries of an earlier pool under the same subdomain, never deleted (e.g. a crash).
    log.append(entry({ at: 100 }));
    log.append(entry({ at: 199 }));
    log.append(entry({ at: 200 }));
    log.append(entry({ at: 300 }));
    log.append(entry({ at: 150, pool: "gone" }));
    expect((await log.list("llm")).map((e) => e.at)).toEqual([300, 200]);
    expect((await log.list("llm", { from: 0, to: 250 })).map((e) => e.at)).toEqual([200]);
    expect((await log.list("llm", { from: 250 })).map((e) => e.at)).toEqual([300]);
    expect(await log.list("gone")).toEqual([]);
  });

  it("rejects a bad query", async () => {
    const log = new BufferedAccessLog({
      store: new MemoryAccessLogStore(),
      clock: new ManualClock(0),
    });
    await expect(log.list("llm", { limit: 0 })).rejects.toThrow(InvalidArgumentError);
  });

  it("retention prunes each pool by its own days, at start and then on the interval", async () => {
    const clock = new ManualClock(100 * DAY);
    const log = new BufferedAccessLog({ store: new MemoryAccessLogStore(), clock });
    log.append(entry({ pool: "short", at: 100 * DAY - 2 * DAY }));
    log.append(entry({ pool: "short", at: 100 * DAY - 12 * 3_600_000 }));
    log.append(entry({ pool: "long", at: 100 * DAY - 20 * DAY }));
    const job = startAccessLogRetention({
      accessLog: log,
      clock,
      intervalMs: DAY,
      retention: () => [
        { pool: "short", retentionDays: 1 },
        { pool: "long", retentionDays: 30 },
      ],
    });
    expect(await log.list("short")).toHaveLength(1);
    expect(await log.list("long")).toHaveLength(1);
    await clock.advance(DAY);
    expect(await log.list("short")).toHaveLength(0);
    job.stop();
    expect(clock.pendingTimers).toBe(0);
  });
  it("retention also prunes what a pool's subdomain logged before the pool was created", async () => {
    const clock = new ManualClock(100 * DAY);
    const store = new MemoryAccessLogStore();
    const log = new BufferedAccessLog({ store, clock });
    log.append(entry({ at: 100 * DAY - 2 * 3_600_000 }));
    log.append(entry({ at: 100 * DAY - 3_600_000 }));
    log.append(entry({ at: 100 * DAY - 30 * 60_000 }));
    const pools = [
      { subdomain: "llm", metricsRetentionDays: 30, createdAt: 100 * DAY - 3_600_000 },
    ];
    expect(await log.prune(retentionOfPools(pools), clock.now())).toBe(1);
    const all = { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 10 };
    expect((await store.list("llm", all)).map((e) => 100 * DAY - e.at)).toEqual([
      30 * 60_000,
      3_600_000,
    ]);
  });
});
