import { describe, expect, it } from "vitest";
import {
  InvalidArgumentError,
  PoolNotFoundError,
  RejectedError,
  SlotNotFoundError,
} from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { AcquireOptions } from "../../src/governor/types.js";
import type { OutcomeReport } from "../../src/learning/types.js";
import { manualGovernor, outcomeOf, pendingRun, track } from "./helpers.js";

describe("bad input gets a typed error or is ignored, and no slot is lost", () => {
  it("refuses every malformed waitMs with InvalidArgumentError before taking a slot", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 1000 } });
    for (const waitMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, "100"]) {
      await expect(
        governor.acquire("llm", { waitMs } as unknown as AcquireOptions),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(
      governor.acquire("llm", { waitMs: "100" } as unknown as AcquireOptions),
    ).rejects.toThrow('waitMs must be a non-negative integer of milliseconds, got "100".');
    await expect(governor.acquire("llm", { waitMs: 1.5 })).rejects.toThrow("got 1.5.");
    expect((await governor.status("llm")).held).toBe(0);
    await expect(governor.acquire("llm", { waitMs: 0 })).resolves.toBeTruthy();
  });

  it("refuses a run() without a function and a signal that is no AbortSignal", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    await expect(governor.run("llm", 5 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    for (const signal of [{}, "abort", 1]) {
      await expect(
        governor.acquire("llm", { signal } as unknown as AcquireOptions),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("treats null options as none", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const none = null as unknown as AcquireOptions;
    await expect(governor.acquire("llm", none)).resolves.toBeTruthy();
    await expect(governor.run("llm", () => 1, none)).rejects.toBeInstanceOf(RejectedError);
  });

  it("refuses misspelt or mistyped acquire options instead of failing fast quietly", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 1000 } });
    await expect(governor.acquire("llm", { wait: 100 } as never)).rejects.toThrow(
      'Unknown acquire option "wait" (known: waitMs, noQueue, signal).',
    );
    await expect(governor.acquire("llm", "x" as never)).rejects.toThrow(
      "Acquire options must be an object",
    );
    await expect(governor.acquire("llm", { noQueue: "no" } as never)).rejects.toThrow(
      "noQueue must be true or false, got string.",
    );
    await expect(governor.run("llm", () => 1, { wait: 1 } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("refuses a release or renew without a slot id string, and keeps the slot", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const grant = await governor.acquire("llm");
    for (const slotId of [undefined, null, 42, {}]) {
      await expect(governor.release("llm", slotId as never)).rejects.toThrow(
        "slotId must be the string a grant carries",
      );
      await expect(governor.renew("llm", slotId as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    expect((await governor.status("llm")).held).toBe(1);
    await expect(governor.release("llm", grant.slotId)).resolves.toEqual({ released: true });
  });

  it("refuses createGovernor options it cannot use, a misspelt store above all", () => {
    expect(() => createGovernor({ stroe: {} } as never)).toThrow(
      'Unknown createGovernor() option "stroe" (known: store, clock, metrics).',
    );
    expect(() => createGovernor({ store: 5 } as never)).toThrow(
      "store must be a SlotStore (missing setListener, upsertPool, acquire, release, renew, cancel), got number.",
    );
    expect(() => createGovernor({ clock: {} } as never)).toThrow("clock must be a Clock");
    expect(() => createGovernor("x" as never)).toThrow(InvalidArgumentError);
    expect(createGovernor(null as never)).toBeTruthy();
  });

  it("answers unknown pools with PoolNotFoundError, except release which answers false", async () => {
    const { governor } = manualGovernor();
    await expect(governor.acquire("ghost")).rejects.toBeInstanceOf(PoolNotFoundError);
    await expect(governor.run("ghost", () => 1)).rejects.toBeInstanceOf(PoolNotFoundError);
    await expect(governor.renew("ghost", "x")).rejects.toBeInstanceOf(PoolNotFoundError);
    await expect(governor.status("ghost")).rejects.toBeInstanceOf(PoolNotFoundError);
    await expect(governor.release("ghost", "x")).resolves.toEqual({ released: false });
    await expect(governor.fetch("ghost", "http://127.0.0.1:9/")).rejects.toBeInstanceOf(
      PoolNotFoundError,
    );
  });

  it("refuses settings out of range, including an RPM gate too large to keep exact", async () => {
    const { governor } = manualGovernor();
    for (const settings of [
      { maxConcurrent: 0 },
      { maxConcurrent: 1.5 },
      { maxConcurrent: 2 ** 60 },
      { maxConcurrent: 1, rpm: 0 },
      { maxConcurrent: 1, rpm: 1e9 },
      { maxConcurrent: 1, requestTimeoutMs: 1e300 },
      { maxConcurrent: 1, queue: { size: -1 } },
      { maxConcurrent: "8" },
    ]) {
      await expect(governor.definePool("p", settings as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    await expect(governor.definePool("bad name!", { maxConcurrent: 1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(governor.pools()).toEqual([]);
    await expect(
      governor.definePool("p", { maxConcurrent: 1, rpm: 1_000_000 }),
    ).resolves.toMatchObject({ rpm: 1_000_000 });
  });

  it("refuses budget names a pool name could not be", async () => {
    const { governor } = manualGovernor();
    for (const name of ["", " spaced", "a/b", 7, "x".repeat(129)]) {
      await expect(
        governor.defineBudget(name as string, { originMaxConcurrent: 1 }),
      ).rejects.toThrow(`Invalid budget name ${JSON.stringify(name)}`);
    }
    await expect(
      governor.defineBudget("team-1:openai", { originMaxConcurrent: 1 }),
    ).resolves.toBeUndefined();
  });

  it("refuses unknown or misspelt setting fields instead of ignoring them", async () => {
    const { governor } = manualGovernor();
    for (const settings of [
      { maxConcurrent: 1, bogus: true },
      { maxConcurrent: 1, queue: { size: 1, timeout: 5 } },
      { maxConcurrent: 1, budget: { id: "b", reservedConcurrent: 0, extra: 1 } },
    ]) {
      await expect(governor.definePool("llm", settings as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    await expect(
      governor.defineBudget("b", { originMaxConcurrent: 2, pools: [] } as never),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(governor.pools()).toEqual([]);
  });

  it("cuts a renew interval longer than half the term, so run() keeps its slot", async () => {
    const { governor, clock } = manualGovernor();
    // The default renewIntervalMs (10 s) would renew only after a 1 s lease ran out.
    await governor.definePool("llm", { maxConcurrent: 1, termMs: 1000 });
    expect(governor.poolSettings("llm")?.renewIntervalMs).toBe(500);
    const work = pendingRun(governor, "llm");
    for (let step = 0; step < 20; step++) await clock.advance(250);
    expect(work.abortReason()).toBeNull();
    expect((await governor.status("llm")).held).toBe(1);
    await expect(governor.acquire("llm")).rejects.toBeInstanceOf(RejectedError);
    work.finish();
    await work.running;
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("releases whatever garbage the outcome holds, and learns nothing from it", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const garbage: unknown[] = [
      "429",
      [429],
      { status: 99 },
      { status: 600, throttled: -3, retryAfterMs: -5 },
      { status: 200.5, rate: "fast", headers: 42 },
      { headers: { "retry-after": "soon", "x-ratelimit-limit-requests": "-5" } },
      { headers: [["retry-after"]] },
      { rate: { limit: Number.NaN, remaining: -1, resetMs: Number.POSITIVE_INFINITY } },
    ];
    for (const outcome of garbage) {
      const grant = await governor.acquire("llm");
      await expect(
        governor.release("llm", grant.slotId, outcome as OutcomeReport),
      ).resolves.toEqual({ released: true });
    }
    expect((await governor.status("llm")).learned).toEqual({
      concurrency: null,
      rpm: null,
      pausedUntil: 0,
    });
  });

  it("keeps no gate for an upstream that reports an absurd request limit", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2 });
    const first = await governor.acquire("llm");
    await governor.release("llm", first.slotId, {
      status: 200,
      headers: { "x-ratelimit-limit-requests": "100" },
    });
    expect((await governor.status("llm")).learned.rpm).toBe(100);
    const second = await governor.acquire("llm");
    await expect(
      governor.release("llm", second.slotId, {
        status: 200,
        headers: { "x-ratelimit-limit-requests": "9007199254740991" },
      }),
    ).resolves.toEqual({ released: true });
    expect((await governor.status("llm")).learned.rpm).toBeNull();
    await expect(governor.acquire("llm")).resolves.toBeTruthy();
  });

  it("rejects the waiters of a removed pool, and stops its run() work, with PoolNotFoundError", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2, queue: { size: 5, timeoutMs: 10_000 } });
    const held = await governor.acquire("llm");
    const work = pendingRun(governor, "llm");
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = track(governor.acquire("llm", { waitMs: 10_000 }));
    await governor.removePool("llm");
    await expect(waiting.promise).rejects.toBeInstanceOf(PoolNotFoundError);
    expect(work.abortReason()).toBeInstanceOf(PoolNotFoundError);
    // Said as what happened, not as a pool never defined.
    expect(work.abortReason()).toMatchObject({ message: 'Pool "llm" was removed.' });
    work.finish();
    await work.running;
    await expect(governor.release("llm", held.slotId)).resolves.toEqual({ released: false });
    await expect(governor.acquire("llm")).rejects.toBeInstanceOf(PoolNotFoundError);
  });

  it("answers not_found to a renew that comes after the lease ran out", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, termMs: 5000 });
    const grant = await governor.acquire("llm");
    clock.advanceSync(5000);
    await expect(governor.renew("llm", grant.slotId)).rejects.toBeInstanceOf(SlotNotFoundError);
    await expect(governor.release("llm", grant.slotId)).resolves.toEqual({ released: false });
    expect((await governor.status("llm")).held).toBe(0);
    const outcome = await outcomeOf(governor.acquire("llm"));
    expect(outcome.ok).toBe(true);
  });
});
