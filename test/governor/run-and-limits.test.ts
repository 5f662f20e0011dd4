import { describe, expect, it } from "vitest";
import { RejectedError } from "../../src/errors.js";
import type { RunContext } from "../../src/governor/types.js";
import { manualGovernor, outcomeOf, track } from "./helpers.js";

describe("run", () => {
  it("does not start fn when the caller aborted before the slot arrived", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const controller = new AbortController();
    let ran = false;
    const running = governor.run(
      "llm",
      () => {
        ran = true;
      },
      { signal: controller.signal },
    );
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: "aborted" });
    expect(ran).toBe(false);
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("releases the slot when fn throws", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    await expect(
      governor.run("llm", () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect((await governor.status("llm")).held).toBe(0);
    await expect(governor.run("llm", () => 42)).resolves.toBe(42);
  });

  it("lets fn destructure report (as the README does) and learns from what it reports", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const answer = await governor.run("llm", async ({ signal, report }) => {
      expect(signal.aborted).toBe(false);
      report({ status: 429, retryAfterMs: 5000 });
      return "done";
    });
    expect(answer).toBe("done");
    const { held, learned } = await governor.status("llm");
    expect(held).toBe(0);
    expect(learned.pausedUntil).toBe(clock.now() + 5000);
  });

  it("keeps the lease of long work alive and aborts the work at the request deadline", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 1,
      termMs: 30_000,
      requestTimeoutMs: 120_000,
    });
    let signal: AbortSignal | undefined;
    let finish: () => void = () => {};
    const running = governor.run("llm", (context) => {
      signal = context.signal;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    });
    await clock.advance(100_000);
    expect((await governor.status("llm")).held).toBe(1);
    expect(signal?.aborted).toBe(false);
    await clock.advance(20_000);
    expect(signal?.aborted).toBe(true);
    finish();
    await running;
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("passes the caller's abort to the running work", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const controller = new AbortController();
    let started: () => void = () => {};
    const fnStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const running = governor.run(
      "llm",
      (context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason));
          started();
        }),
      { signal: controller.signal },
    );
    await fnStarted;
    controller.abort(new Error("user went away"));
    await expect(running).rejects.toThrow("user went away");
    expect((await governor.status("llm")).held).toBe(0);
  });
});

describe("run: onAbort", () => {
  it("works destructured, as report does", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const heard: unknown[] = [];
    const answer = await governor.run("llm", ({ onAbort }) => {
      const stop = onAbort((reason) => heard.push(reason));
      stop();
      return "done";
    });
    expect(answer).toBe("done");
    expect(heard).toEqual([]);
  });

  it("names the cap, not a lost slot, when the lease ends with the request deadline", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, termMs: 1000, requestTimeoutMs: 2500 });
    const reason = governor.run(
      "llm",
      (context) => new Promise((resolve) => context.onAbort(resolve)),
    );
    await clock.advance(3000);
    // The governor releases the slot itself: the message does not ask the work to.
    expect(await reason).toMatchObject({
      code: "capped",
      message: expect.stringMatching(/request timeout .* cut off; its slot is released\.$/),
    });
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("calls its listeners once, with the reason, at the request deadline; the signal agrees", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 1,
      termMs: 30_000,
      requestTimeoutMs: 60_000,
    });
    const reasons: unknown[] = [];
    let finish: () => void = () => {};
    const running = governor.run("llm", (context) => {
      context.onAbort((reason) => reasons.push(reason));
      context.onAbort((reason) => reasons.push(reason));
      const unsubscribed = context.onAbort((reason) => reasons.push(["never", reason]));
      unsubscribed();
      return new Promise<void>((resolve) => {
        finish = () => {
          expect(context.signal.aborted).toBe(true);
          expect(context.signal.reason).toBe(reasons[0]);
          resolve();
        };
      });
    });
    await clock.advance(59_000);
    expect(reasons).toEqual([]);
    await clock.advance(31_000);
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toMatchObject({ code: "capped" });
    expect(reasons[1]).toBe(reasons[0]);
    finish();
    await running;
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("hears the caller's abort, and answers at once when the hold already aborted", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const controller = new AbortController();
    const heard: unknown[] = [];
    let late: unknown;
    const running = governor.run(
      "llm",
      (context) =>
        new Promise<void>((resolve) => {
          context.onAbort((reason) => {
            heard.push(reason);
            context.onAbort((again) => {
              late = again;
            });
            resolve();
          });
          controller.abort(new Error("user went away"));
        }),
      { signal: controller.signal },
    );
    await running;
    expect(heard).toEqual([controller.signal.reason]);
    expect(late).toBe(controller.signal.reason);
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("is quiet after the work finished, and hears close() while it runs", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2 });
    let quiet = 0;
    const caller = new AbortController();
    let finished: RunContext | undefined;
    await governor.run(
      "llm",
      (context) => {
        finished = context;
      },
      { signal: caller.signal },
    );
    // Subscribing after the work finished links nothing: the caller's abort reaches no one.
    finished?.onAbort(() => quiet++);
    caller.abort();
    let closedReason: unknown;
    const running = governor
      .run(
        "llm",
        (context) =>
          new Promise<void>((resolve) => {
            context.onAbort((reason) => {
              closedReason = reason;
              resolve();
            });
          }),
      )
      .catch(() => {});
    await Promise.resolve();
    await governor.close();
    await running;
    expect(quiet).toBe(0);
    expect(closedReason).toMatchObject({ code: "closed" });
  });
});

describe("pool updates, budgets and RPM", () => {
  it("applies new limits to a running pool without dropping held slots", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2, queue: { size: 5, timeoutMs: 10_000 } });
    const a = await governor.acquire("llm");
    await governor.acquire("llm");
    const waiting = track(governor.acquire("llm", { waitMs: 10_000 }));
    await governor.definePool("llm", { maxConcurrent: 3, queue: { size: 5, timeoutMs: 10_000 } });
    await expect(waiting.promise).resolves.toMatchObject({ effectiveLimit: 3 });
    await governor.definePool("llm", { maxConcurrent: 1 });
    expect((await governor.status("llm")).held).toBe(3);
    await expect(governor.acquire("llm")).rejects.toBeInstanceOf(RejectedError);
    await governor.release("llm", a.slotId);
    expect((await governor.status("llm")).held).toBe(2);
  });

  it("a grant's remainingSlots counts what the budget still leaves the pool", async () => {
    const { governor } = manualGovernor();
    await governor.defineBudget("openai", { originMaxConcurrent: 3 });
    await governor.definePool("chat", {
      maxConcurrent: 10,
      budget: { id: "openai", reservedConcurrent: 1 },
    });
    await governor.definePool("batch", {
      maxConcurrent: 10,
      budget: { id: "openai", reservedConcurrent: 1 },
    });
    // The pool alone would leave 9; the budget leaves chat one borrowable slot.
    expect((await governor.acquire("chat")).remainingSlots).toBe(1);
    expect((await governor.acquire("chat")).remainingSlots).toBe(0);
    expect((await governor.acquire("batch")).remainingSlots).toBe(0);
    await governor.definePool("alone", { maxConcurrent: 2 });
    expect((await governor.acquire("alone")).remainingSlots).toBe(1);
  });

  it("a budget pool always gets its reservation and borrows only the unallocated share", async () => {
    const { governor } = manualGovernor();
    await governor.defineBudget("openai", { originMaxConcurrent: 5 });
    await governor.definePool("chat", {
      maxConcurrent: 5,
      budget: { id: "openai", reservedConcurrent: 2 },
    });
    await governor.definePool("batch", {
      maxConcurrent: 5,
      budget: { id: "openai", reservedConcurrent: 1 },
    });
    // unallocated = 5 - 3 = 2: batch may use 1 reserved + 2 borrowed.
    for (let i = 0; i < 3; i++) await governor.acquire("batch");
    const refused = await outcomeOf(governor.acquire("batch"));
    expect((refused as { error: RejectedError }).error.reason).toBe("budget");
    await governor.acquire("chat");
    await governor.acquire("chat");
    await expect(governor.acquire("chat")).rejects.toBeInstanceOf(RejectedError);
  });

  it("a ceiling of 0 stops the budget's pools until it is raised (the kill switch)", async () => {
    const { governor } = manualGovernor();
    await governor.defineBudget("openai", { originMaxConcurrent: 2 });
    await governor.definePool("chat", {
      maxConcurrent: 5,
      queue: { size: 5, timeoutMs: 60_000 },
      budget: { id: "openai", reservedConcurrent: 0 },
    });
    const running = await governor.acquire("chat");
    await governor.defineBudget("openai", { originMaxConcurrent: 0 });
    const refused = await outcomeOf(governor.acquire("chat", { waitMs: 0 }));
    expect((refused as { error: RejectedError }).error.reason).toBe("budget");
    const waiter = track(governor.acquire("chat", { waitMs: 60_000 }));
    // The slot held before keeps running; its release hands nothing on at ceiling 0.
    await governor.release("chat", running.slotId);
    await Promise.resolve();
    expect(waiter.settled()).toBe(false);
    await governor.defineBudget("openai", { originMaxConcurrent: 1 });
    await expect(waiter.promise).resolves.toMatchObject({ slotId: expect.any(String) });
  });

  it("refuses reservations that exceed the budget's ceiling", async () => {
    const { governor } = manualGovernor();
    await governor.defineBudget("b", { originMaxConcurrent: 2 });
    await expect(
      governor.definePool("p", { maxConcurrent: 5, budget: { id: "b", reservedConcurrent: 3 } }),
    ).rejects.toThrow(/exceed/);
    await expect(
      governor.definePool("q", {
        maxConcurrent: 5,
        budget: { id: "missing", reservedConcurrent: 0 },
      }),
    ).rejects.toMatchObject({ code: "budget_not_found" });
  });

  it("an RPM-blocked waiter waits for its turn inside its budget, else gets the time to it", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 10,
      rpm: 2,
      queue: { size: 5, timeoutMs: 60_000 },
    });
    const first = await governor.acquire("llm");
    await clock.advance(10_000);
    await governor.acquire("llm");
    const tooShort = await outcomeOf(governor.acquire("llm", { waitMs: 1000 }));
    const error = (tooShort as { error: RejectedError }).error;
    expect(error.reason).toBe("rpm");
    expect(error.retryAfterMs).toBe(50_000);
    const waiting = track(governor.acquire("llm", { waitMs: 60_000 }));
    await clock.advance(49_999);
    expect(waiting.settled()).toBe(false);
    await clock.advance(1);
    await expect(waiting.promise).resolves.toMatchObject({ queuedMs: 50_000 });
    expect(first.slotId).toBeTruthy();
  });
});

describe("learning from outcomes", () => {
  it("a pool switched to adaptive: false drops its learned concurrency at once", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 3 });
    const grant = await governor.acquire("llm");
    await clock.advance(1);
    await governor.release("llm", grant.slotId, { status: 429 });
    expect((await governor.status("llm")).learned.concurrency).toBe(1);
    await governor.definePool("llm", { maxConcurrent: 3, adaptive: false });
    const status = await governor.status("llm");
    expect(status.learned.concurrency).toBeNull();
    expect(status.effectiveLimit).toBe(3);
    await Promise.all([1, 2, 3].map(() => governor.acquire("llm")));
  });

  it("a throttled release tightens the limit; resetLearned restores it", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 8 });
    const grants = [];
    for (let i = 0; i < 5; i++) grants.push(await governor.acquire("llm"));
    await governor.release("llm", grants[4]!.slotId, { status: 429 });
    expect((await governor.status("llm")).effectiveLimit).toBe(4);
    await governor.resetLearned("llm");
    expect((await governor.status("llm")).effectiveLimit).toBe(8);
  });

  it("Retry-After pauses new admissions until it passes", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 8 });
    const grant = await governor.acquire("llm");
    await governor.release("llm", grant.slotId, { status: 429, headers: { "retry-after": "3" } });
    const refused = await outcomeOf(governor.acquire("llm"));
    expect((refused as { error: RejectedError }).error).toMatchObject({
      reason: "paused",
      retryAfterMs: 3000,
    });
    await clock.advance(3000);
    await expect(governor.acquire("llm")).resolves.toBeTruthy();
  });

  it("ignores a malformed outcome but still releases", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const grant = await governor.acquire("llm");
    await expect(
      governor.release("llm", grant.slotId, { status: 99, headers: { "retry-after": "soon" } }),
    ).resolves.toEqual({ released: true });
    expect((await governor.status("llm")).learned).toEqual({
      concurrency: null,
      rpm: null,
      pausedUntil: 0,
    });
  });
});
