import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor, SlotGrant } from "../../src/governor/types.js";
import { PROBE_WAIT_BASE_MS, successesToProbe } from "../../src/learning/probe-backoff.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import type { SlotStore } from "../../src/store/types.js";
import { deleteKeys, openStore, requireRedis, uniquePrefix } from "../redis/redis-harness.js";

const redisAvailable = await requireRedis("shared probe backoff");
const prefix = uniquePrefix("shared-probe");
const opened: { close(): unknown }[] = [];

afterEach(async () => {
  for (const closable of opened.splice(0)) await closable.close();
});
afterAll(async () => {
  if (redisAvailable) await deleteKeys(prefix);
});

const POOL = "llm";
const SETTINGS = { maxConcurrent: 8, adaptive: true, queue: { size: 10, timeoutMs: 60_000 } };

/** Two governors, as two processes would have, sharing one store's limits. */
type TwoProcesses = (clock: ManualClock) => Promise<[SlotStore, SlotStore]>;

const memory: TwoProcesses = async (clock) => {
  const store = new MemorySlotStore({ clock });
  return [store, store];
};
const redis: TwoProcesses = async (clock) => {
  const first = await openStore(prefix, { clock });
  const second = await openStore(prefix, { clock });
  return [first.store, second.store];
};

async function governors(clock: ManualClock, stores: TwoProcesses): Promise<[Governor, Governor]> {
  const [storeA, storeB] = await stores(clock);
  const a = createGovernor({ clock, store: storeA });
  const b = createGovernor({ clock, store: storeB });
  opened.push(a, b);
  if (storeA !== storeB) opened.push(storeA, storeB);
  await a.definePool(POOL, SETTINGS);
  await b.definePool(POOL, SETTINGS);
  return [a, b];
}

async function acquireMany(governor: Governor, count: number): Promise<SlotGrant[]> {
  const grants: SlotGrant[] = [];
  for (let index = 0; index < count; index += 1) grants.push(await governor.acquire(POOL));
  return grants;
}

describe.each([
  { store: "memory", stores: memory, skip: false },
  { store: "redis", stores: redis, skip: !redisAvailable },
])("probe backoff shared by processes on one store ($store)", ({ store, stores, skip }) => {
  it.skipIf(skip)(
    "a probe that failed in one process backs off in the other, and the other's failure counts on",
    async () => {
      const clock = new ManualClock();
      const [a, b] = await governors(clock, stores);

      // Process A: congestion at 4 (a 429 on a slot granted with 4 held).
      const held = await acquireMany(a, 4);
      await clock.advance(10);
      await a.release(POOL, held[3]!.slotId, { status: 429 });
      for (const grant of held.slice(0, 3)) await a.release(POOL, grant.slotId);

      // Process B sees A's backoff before it learned anything itself.
      expect((await b.status(POOL)).learner).toEqual({
        limit: 3,
        nextProbeLevel: 4,
        nextProbeInMs: PROBE_WAIT_BASE_MS,
        successesToNextProbe: successesToProbe(3, 1),
        failedProbes: 1,
      });

      // B's busy successes probe 4 once A's wait is over and enough of them came.
      await clock.advance(PROBE_WAIT_BASE_MS);
      const busy = await acquireMany(b, 3);
      for (let index = 0; index < successesToProbe(3, 1); index += 1) {
        await b.release(POOL, busy[index % 3]!.slotId, { status: 200 });
        busy[index % 3] = await b.acquire(POOL);
      }
      expect((await b.status(POOL)).effectiveLimit).toBe(4);

      // The probe fails in B: the second failure at 4, which A sees.
      await clock.advance(10);
      const probe = await b.acquire(POOL);
      await b.release(POOL, probe.slotId, { status: 429 });
      expect((await a.status(POOL)).learner).toEqual({
        limit: 3,
        nextProbeLevel: 4,
        nextProbeInMs: 2 * PROBE_WAIT_BASE_MS,
        successesToNextProbe: successesToProbe(3, 2),
        failedProbes: 2,
      });
      expect((await a.status(POOL)).learned).toMatchObject({
        concurrency: 3,
        probe: { level: 4, failures: 2, failedAt: clock.now() },
      });
      for (const grant of busy) await b.release(POOL, grant.slotId);
    },
  );

  it.skipIf(skip)(
    "a reset in one process is not undone by a pause the other had adopted",
    async () => {
      // A fresh pool: the test before left its learned limits in Redis.
      if (store === "redis") await deleteKeys(prefix);
      const clock = new ManualClock();
      const [a, b] = await governors(clock, stores);
      const early = await b.acquire(POOL);
      const throttled = await a.acquire(POOL);
      await a.release(POOL, throttled.slotId, { status: 429, retryAfterMs: 120_000 });
      // B adopts A's pause with its next release.
      await b.release(POOL, early.slotId, { status: 200 });
      expect((await b.status(POOL)).learned.pausedUntil).toBe(clock.now() + 120_000);

      await a.resetLearned(POOL);
      // B learns something else (a concurrency throttle lowers the limit) and writes it.
      await clock.advance(10);
      const slots = await acquireMany(b, 4);
      await clock.advance(10);
      await b.release(POOL, slots[3]!.slotId, { status: 429 });
      for (const grant of slots.slice(0, 3)) await b.release(POOL, grant.slotId);
      // On Redis, A hears of B's write a moment later.
      await expect
        .poll(async () => (await a.status(POOL)).learned)
        .toMatchObject({ concurrency: 3, pausedUntil: 0 });
      await expect(a.acquire(POOL)).resolves.toBeTruthy();
    },
  );
});
