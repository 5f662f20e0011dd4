import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { BufferedAccessLog } from "../../src/access-log/buffered-access-log.js";
import { MemoryAccessLogStore } from "../../src/access-log/memory-access-log-store.js";
import { startAccessLogRetention } from "../../src/access-log/retention.js";
import type { AccessLogEntry, AccessLogStore } from "../../src/access-log/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { InvalidArgumentError } from "../../src/errors.js";

const DAY = 86_400_000;

function entry(overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    at: 1_700_000_000_000,
    pool: "llm",
    keyId: 1,
    outcome: "admitted",
    reason: null,
    queuedMs: 0,
    remoteAddress: "127.0.0.1",
    source: "lock",
    ...overrides,
  };
}

describe.each([
  ["memory", () => ({ store: new MemoryAccessLogStore() as AccessLogStore, close: () => {} })],
  [
    "sqlite",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "sluice-access-"));
      const db: Database.Database = openSluiceDatabase(join(dir, "sluice.db"));
      return {
        store: new SqliteAccessLogStore(db) as AccessLogStore,
        close: () => {
          db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
])("%s access log store", (_name, open) => {
  let store: AccessLogStore;
  let close: () => void;
  beforeEach(() => {
    ({ store, close } = open());
  });
  afterEach(() => close());

  it("lists a pool's entries in [from, to), newest first, up to the limit", () => {
    store.insert([
      entry({ at: 100, outcome: "admitted" }),
      entry({ at: 200, outcome: "rejected", reason: "rpm" }),
      entry({ at: 300, outcome: "queued", queuedMs: 40 }),
      entry({ at: 250, pool: "other" }),
    ]);
    const range = { from: 100, to: 300, limit: 10 };
    expect(store.list("llm", range).map((e) => e.at)).toEqual([200, 100]);
    expect(store.list("llm", { from: 0, to: 1_000, limit: 2 }).map((e) => e.at)).toEqual([
      300, 200,
    ]);
    expect(store.list("llm", { from: 0, to: 1_000, limit: 10 })[1]).toEqual(
      entry({ at: 200, outcome: "rejected", reason: "rpm" }),
    );
  });

  it("prunes one pool's entries older than a cutoff", () => {
    store.insert([entry({ at: 100 }), entry({ at: 200 }), entry({ at: 100, pool: "other" })]);
    expect(store.pruneBefore("llm", 150)).toBe(1);
    expect(store.list("llm", { from: 0, to: 1_000, limit: 10 }).map((e) => e.at)).toEqual([200]);
    expect(store.list("other", { from: 0, to: 1_000, limit: 10 })).toHaveLength(1);
  });
});

describe("BufferedAccessLog", () => {
  it("writes in batches off the request path: nothing reaches the store until the timer", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryAccessLogStore();
    const log = new BufferedAccessLog({ store, clock, flushIntervalMs: 1_000 });
    log.append(entry({ at: 1 }));
    log.append(entry({ at: 2 }));
    expect(store.list("llm", { from: 0, to: 10, limit: 10 })).toEqual([]);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_000);
    expect(store.list("llm", { from: 0, to: 10, limit: 10 })).toHaveLength(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it("a full batch is written on the next tick; list() sees every earlier append", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryAccessLogStore();
    const log = new BufferedAccessLog({ store, clock, batchSize: 3 });
    for (let i = 0; i < 3; i++) log.append(entry({ at: i }));
    await clock.advance(0);
    expect(store.list("llm", { from: 0, to: 10, limit: 10 })).toHaveLength(3);
    log.append(entry({ at: 5 }));
    expect(log.list("llm").map((e) => e.at)).toEqual([5, 2, 1, 0]);
  });

  it("keeps a failed batch for the next try, and drops appends after close", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryAccessLogStore();
    let failing = true;
    const errors: unknown[] = [];
    const store: AccessLogStore = {
      insert: (entries) => {
        if (failing) throw new Error("database is locked");
        inner.insert(entries);
      },
      list: (pool, query) => inner.list(pool, query),
      pruneBefore: (pool, before) => inner.pruneBefore(pool, before),
    };
    const log = new BufferedAccessLog({ store, clock, onError: (e) => errors.push(e) });
    log.append(entry({ at: 1 }));
    await clock.advance(1_000);
    expect(errors).toHaveLength(1);
    expect(log.pending).toBe(1);
    failing = false;
    await clock.advance(1_000);
    expect(inner.list("llm", { from: 0, to: 10, limit: 10 })).toHaveLength(1);
    log.close();
    log.append(entry({ at: 2 }));
    expect(log.dropped).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it("rejects a bad query", () => {
    const log = new BufferedAccessLog({
      store: new MemoryAccessLogStore(),
      clock: new ManualClock(0),
    });
    expect(() => log.list("llm", { limit: 0 })).toThrow(InvalidArgumentError);
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
    expect(log.list("short")).toHaveLength(1);
    expect(log.list("long")).toHaveLength(1);
    await clock.advance(DAY);
    expect(log.list("short")).toHaveLength(0);
    job.stop();
    expect(clock.pendingTimers).toBe(0);
  });
});
