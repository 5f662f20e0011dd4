import { describe, expect, it } from "vitest";
import {
  AbortedError,
  InvalidArgumentError,
  PoolNotFoundError,
  QueueTimeoutError,
  RejectedError,
  SlotCappedError,
  SlotNotFoundError,
} from "../../src/errors.js";
import { manualGovernor, outcomeOf, track } from "./helpers.js";

describe("acquire", () => {
  it("grants with the contract's lock grant fields and live figures", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 3,
      requestTimeoutMs: 60_000,
      termMs: 30_000,
    });
    const grant = await governor.acquire("llm");
    expect(grant).toMatchObject({
      leaseDeadline: clock.now() + 30_000,
      requestDeadline: clock.now() + 60_000,
      termMs: 30_000,
      renewIntervalMs: 10_000,
      remainingSlots: 2,
      effectiveLimit: 3,
      queuedMs: 0,
    });
    expect(grant.slotId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("fails fast with a retry hint when no slot is free", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 10, timeoutMs: 5000 } });
    await governor.acquire("llm");
    const result = await outcomeOf(governor.acquire("llm"));
    expect(result.ok).toBe(false);
    const error = (result as { error: RejectedError }).error;
    expect(error).toBeInstanceOf(RejectedError);
    expect(error.code).toBe("too_many_requests");
    expect(error.retryAfterMs).toBeGreaterThan(0);
  });

  it("noQueue forces fail-fast even with waitMs", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 10, timeoutMs: 5000 } });
    await governor.acquire("llm");
    await expect(governor.acquire("llm", { waitMs: 1000, noQueue: true })).rejects.toBeInstanceOf(
      RejectedError,
    );
  });

  it("rejects bad waitMs and unknown pools with typed errors", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    await expect(governor.acquire("llm", { waitMs: -1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(governor.acquire("llm", { waitMs: 1.5 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(governor.acquire("nope")).rejects.toBeInstanceOf(PoolNotFoundError);
    await expect(governor.definePool("bad", { maxConcurrent: 0 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it("serves waiters FIFO, handed the slot by the release itself", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 10, timeoutMs: 60_000 } });
    const first = await governor.acquire("llm");
    const order: string[] = [];
    const waiters = ["a", "b", "c"].map((name) =>
      governor.acquire("llm", { waitMs: 60_000 }).then((grant) => {
        order.push(name);
        return grant;
      }),
    );
    await clock.advance(1000);
    expect(order).toEqual([]);
    await governor.release("llm", first.slotId);
    const a = await waiters[0]!;
    expect(a.queuedMs).toBe(1000);
    expect(order).toEqual(["a"]);
    await governor.release("llm", a.slotId);
    const b = await waiters[1]!;
    await governor.release("llm", b.slotId);
    await waiters[2];
    expect(order).toEqual(["a", "b", "c"]);
  });

  it("clamps waitMs to the queue timeout and times out with a typed error", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 10, timeoutMs: 2000 } });
    await governor.acquire("llm");
    const waiting = track(governor.acquire("llm", { waitMs: 60_000 }));
    await clock.advance(1999);
    expect(waiting.settled()).toBe(false);
    await clock.advance(1);
    const result = await outcomeOf(waiting.promise);
    expect((result as { error: unknown }).error).toBeInstanceOf(QueueTimeoutError);
    expect((await governor.status("llm")).queued).toBe(0);
  });

  it("rejects queue_full when the queue is at its size", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 1, timeoutMs: 2000 } });
    await governor.acquire("llm");
    void governor.acquire("llm", { waitMs: 1000 }).catch(() => {});
    const result = await outcomeOf(governor.acquire("llm", { waitMs: 1000 }));
    expect((result as { error: RejectedError }).error.reason).toBe("queue_full");
  });

  it("an aborted waiter leaves the queue at once and never gets a slot", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 10, timeoutMs: 60_000 } });
    const held = await governor.acquire("llm");
    const controller = new AbortController();
    const aborted = governor.acquire("llm", { waitMs: 60_000, signal: controller.signal });
    const next = governor.acquire("llm", { waitMs: 60_000 });
    expect((await governor.status("llm")).queued).toBe(2);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortedError);
    expect((await governor.status("llm")).queued).toBe(1);
    await governor.release("llm", held.slotId);
    await expect(next).resolves.toMatchObject({ remainingSlots: 0 });
  });
});

describe("renew and release", () => {
  it("extends the lease, never past requestDeadline, then answers capped", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 1,
      termMs: 30_000,
      requestTimeoutMs: 50_000,
    });
    const grant = await governor.acquire("llm");
    await clock.advance(10_000);
    const first = await governor.renew("llm", grant.slotId);
    expect(first.leaseDeadline).toBe(clock.now() + 30_000);
    await clock.advance(10_000);
    const second = await governor.renew("llm", grant.slotId);
    expect(second.leaseDeadline).toBe(grant.requestDeadline);
    await expect(governor.renew("llm", grant.slotId)).rejects.toBeInstanceOf(SlotCappedError);
  });

  it("release is idempotent; renew after release is not found", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const grant = await governor.acquire("llm");
    await expect(governor.release("llm", grant.slotId)).resolves.toEqual({ released: true });
    await expect(governor.release("llm", grant.slotId)).resolves.toEqual({ released: false });
    await expect(governor.renew("llm", grant.slotId)).rejects.toBeInstanceOf(SlotNotFoundError);
    await expect(governor.release("unknown-pool", grant.slotId)).resolves.toEqual({
      released: false,
    });
  });

  it("reclaims an unrenewed slot after one term and hands it to the next waiter", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 1,
      termMs: 30_000,
      queue: { size: 5, timeoutMs: 60_000 },
    });
    const abandoned = await governor.acquire("llm");
    const next = track(governor.acquire("llm", { waitMs: 60_000 }));
    await clock.advance(29_999);
    expect(next.settled()).toBe(false);
    await clock.advance(1);
    await expect(next.promise).resolves.toMatchObject({ queuedMs: 30_000 });
    await expect(governor.renew("llm", abandoned.slotId)).rejects.toBeInstanceOf(SlotNotFoundError);
    await expect(governor.release("llm", abandoned.slotId)).resolves.toEqual({ released: false });
  });
});
