import { describe, expect, it } from "vitest";
import { flushMicrotasks, ManualClock } from "../../src/clock/manual-clock.js";
import { AbortedError, GovernorClosedError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import type { SlotStore, StoreAcquireResult, StoreCancelResult } from "../../src/store/types.js";
import { track } from "./helpers.js";

/**
 * The memory store whose cancels reach it only when the test says so, as a cancel on a
 * networked store arrives after a handoff the store already made: the race between a wait
 * running out and a released slot, decided by the store's answer.
 */
function storeWithLateCancels(clock: ManualClock) {
  const store: SlotStore = new MemorySlotStore({ clock });
  const cancelNow = store.cancel.bind(store);
  const held: (() => void)[] = [];
  store.cancel = (pool, slotId) =>
    new Promise<StoreCancelResult>((resolve) => {
      held.push(() => resolve(cancelNow(pool, slotId) as StoreCancelResult));
    });
  const answerCancels = async () => {
    for (const answer of held.splice(0)) answer();
    await flushMicrotasks();
  };
  return { store, answerCancels, cancelsInFlight: () => held.length };
}

async function setup() {
  const clock = new ManualClock(1_000_000);
  const { store, answerCancels, cancelsInFlight } = storeWithLateCancels(clock);
  const governor = createGovernor({ clock, store });
  await governor.definePool("p", {
    maxConcurrent: 1,
    queue: { size: 5, timeoutMs: 5_000 },
    termMs: 3_000,
    requestTimeoutMs: 60_000,
  });
  const holder = await governor.acquire("p");
  return { clock, store, governor, holder, answerCancels, cancelsInFlight };
}

describe("a wait that runs out while the slot is handed over", () => {
  it("gives the slot to the caller, with the wait measured at the handoff", async () => {
    const { clock, store, governor, holder, answerCancels, cancelsInFlight } = await setup();
    const start = clock.now();
    const waiter = track(governor.acquire("p", { waitMs: 400 }));
    await clock.advance(400);
    expect(cancelsInFlight()).toBe(1);
    // The store hands the slot over before the cancel reaches it.
    await governor.release("p", holder.slotId);
    await clock.advance(50);
    expect(waiter.settled()).toBe(false);
    await answerCancels();
    const grant = await waiter.promise;
    expect(grant.queuedMs).toBe(400);
    expect(grant.requestDeadline).toBe(start + 400 + 60_000);
    const snapshot = await store.snapshot("p");
    expect(snapshot?.slotIds).toEqual([grant.slotId]);
  });

  it("never grants a caller that aborts meanwhile: it fails at once, the next waiter gets the slot", async () => {
    const { clock, store, governor, holder, answerCancels } = await setup();
    const controller = new AbortController();
    const aborting = track(governor.acquire("p", { waitMs: 400, signal: controller.signal }));
    const next = track(governor.acquire("p", { waitMs: 5_000 }));
    await clock.advance(400);
    await governor.release("p", holder.slotId);
    await clock.advance(1);
    controller.abort();
    await flushMicrotasks();
    // The abort is honoured before the store has answered the cancel.
    expect(aborting.settled()).toBe(true);
    await expect(aborting.promise).rejects.toBeInstanceOf(AbortedError);
    expect(next.settled()).toBe(false);
    await answerCancels();
    // The aborted caller's slot went back, and the store handed it on in the same release.
    const grant = await next.promise;
    expect(grant.queuedMs).toBe(401);
    const snapshot = await store.snapshot("p");
    expect(snapshot).toMatchObject({ held: 1, queued: 0, slotIds: [grant.slotId] });
  });

  it("gives the slot back when the governor closes while the cancel is in flight", async () => {
    const { clock, store, governor, holder, answerCancels } = await setup();
    const waiter = track(governor.acquire("p", { waitMs: 400 }));
    await clock.advance(400);
    await governor.release("p", holder.slotId);
    await governor.close();
    await expect(waiter.promise).rejects.toBeInstanceOf(GovernorClosedError);
    expect((await store.snapshot("p"))?.held).toBe(1);
    await answerCancels();
    expect((await store.snapshot("p"))?.held).toBe(0);
  });

  it("gives back a slot handed to a waiter the governor already rejected", async () => {
    const { store, governor, holder } = await setup();
    const waiter = track(governor.acquire("p", { waitMs: 1_000 }));
    await governor.close();
    await expect(waiter.promise).rejects.toBeInstanceOf(GovernorClosedError);
    // The store still queues the rejected caller: the release hands it the slot, which comes back.
    await store.release("p", holder.slotId);
    await flushMicrotasks();
    expect(await store.snapshot("p")).toMatchObject({ held: 0, queued: 0 });
  });
});

/** The memory store whose acquire answers arrive only when the test says so (the work is done at once). */
function storeWithLateAcquireAnswers(clock: ManualClock) {
  const store: SlotStore = new MemorySlotStore({ clock });
  const acquireNow = store.acquire.bind(store);
  const held: (() => void)[] = [];
  let holdAnswers = false;
  store.acquire = (pool, request) => {
    const result = acquireNow(pool, request) as StoreAcquireResult;
    if (!holdAnswers) return result;
    return new Promise<StoreAcquireResult>((resolve) => held.push(() => resolve(result)));
  };
  const answerAcquires = async () => {
    for (const answer of held.splice(0)) answer();
    await flushMicrotasks();
  };
  const startHolding = () => {
    holdAnswers = true;
  };
  return { store, answerAcquires, holdAnswers: startHolding };
}

describe("an abort while the store's answer to an acquire is on its way", () => {
  async function setupLate() {
    const clock = new ManualClock(1_000_000);
    const late = storeWithLateAcquireAnswers(clock);
    const governor = createGovernor({ clock, store: late.store });
    await governor.definePool("p", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 5_000 } });
    return { clock, governor, ...late };
  }

  it("rejects a caller granted at once, and frees its slot", async () => {
    const { store, governor, answerAcquires, holdAnswers } = await setupLate();
    holdAnswers();
    const controller = new AbortController();
    const caller = track(governor.acquire("p", { signal: controller.signal }));
    controller.abort();
    await answerAcquires();
    await expect(caller.promise).rejects.toBeInstanceOf(AbortedError);
    expect(await store.snapshot("p")).toMatchObject({ held: 0, queued: 0 });
  });

  it("rejects a queued caller handed a slot before the answer, and frees the slot", async () => {
    const { store, governor, answerAcquires, holdAnswers } = await setupLate();
    const holder = await governor.acquire("p");
    holdAnswers();
    const controller = new AbortController();
    const caller = track(governor.acquire("p", { waitMs: 1_000, signal: controller.signal }));
    // The store queued the caller and hands it the freed slot before its "queued" answer lands.
    await governor.release("p", holder.slotId);
    controller.abort();
    await answerAcquires();
    await expect(caller.promise).rejects.toBeInstanceOf(AbortedError);
    expect(await store.snapshot("p")).toMatchObject({ held: 0, queued: 0 });
  });
});

describe("drain() while the store's answer to an acquire is on its way", () => {
  it("turns away a caller whose queued answer lands after drain(), and gives its slot back", async () => {
    const clock = new ManualClock(1_000_000);
    const late = storeWithLateAcquireAnswers(clock);
    const governor = createGovernor({ clock, store: late.store });
    await governor.definePool("p", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 5_000 } });
    const holder = await governor.acquire("p");
    late.holdAnswers();
    const caller = track(governor.acquire("p", { waitMs: 1_000 }));
    governor.drain();
    await late.answerAcquires();
    await expect(caller.promise).rejects.toBeInstanceOf(GovernorClosedError);
    // The store still queues it: the release hands it the slot, which comes straight back.
    await governor.release("p", holder.slotId);
    await flushMicrotasks();
    expect(await late.store.snapshot("p")).toMatchObject({ held: 0 });
  });
});
