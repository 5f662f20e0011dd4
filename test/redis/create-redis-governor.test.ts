import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createRedisGovernor } from "../../adapters/redis/index.js";
import { PoolNotFoundError, RejectedError, StoreUnavailableError } from "../../src/errors.js";
import type { Governor } from "../../src/governor/types.js";
import { MAX_PAUSE_MS } from "../../src/learning/learner.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("createRedisGovernor");
const prefix = uniquePrefix("redis-governor");
const governors: Governor[] = [];

async function governor(options: Parameters<typeof createRedisGovernor>[0] = {}) {
  const created = await createRedisGovernor({ url: REDIS_URL, prefix, ...options });
  governors.push(created);
  return created;
}

afterEach(async () => {
  for (const created of governors.splice(0)) await created.close();
});

afterAll(async () => {
  if (available) await deleteKeys(prefix);
});

describe.skipIf(!available)("createRedisGovernor", () => {
  it("gives two governors on one URL and prefix one shared limit", async () => {
    const first = await governor();
    const second = await governor();
    await first.definePool("shared", { maxConcurrent: 1, queue: { size: 4, timeoutMs: 5_000 } });
    await second.definePool("shared", { maxConcurrent: 1, queue: { size: 4, timeoutMs: 5_000 } });

    const held = await first.acquire("shared");
    await expect(second.acquire("shared")).rejects.toBeInstanceOf(RejectedError);

    const waiting = second.acquire("shared", { waitMs: 5_000 });
    await first.release("shared", held.slotId);
    const handedOver = await waiting;
    expect(handedOver.slotId).not.toBe(held.slotId);
    await expect(second.release("shared", handedOver.slotId)).resolves.toEqual({ released: true });
  });

  it("learns a 429 before the released slot can go to another process's waiter", async () => {
    const first = await governor();
    const second = await governor();
    const settings = { maxConcurrent: 3, queue: { size: 5, timeoutMs: 5_000 } };
    await first.definePool("tightening", settings);
    await second.definePool("tightening", settings);
    const oldest = await first.acquire("tightening");
    await first.acquire("tightening");
    const newest = await first.acquire("tightening"); // granted with 3 held
    const waiting = second.acquire("tightening", { waitMs: 5_000 });
    await vi.waitFor(async () => expect((await first.status("tightening")).queued).toBe(1));

    await first.release("tightening", newest.slotId, { status: 429 });
    // Congested at 3: the limit is 2 before the slot is free, so the waiter keeps waiting.
    const status = await first.status("tightening");
    expect([status.effectiveLimit, status.held, status.queued]).toEqual([2, 2, 1]);

    await first.release("tightening", oldest.slotId, { status: 200 });
    const handedOver = await waiting;
    expect((await first.status("tightening")).held).toBe(2);
    await second.release("tightening", handedOver.slotId);
  });

  it("a pool removed by one process is gone in the others at once: their waiters and work stop", async () => {
    const first = await governor();
    const second = await governor();
    const settings = { maxConcurrent: 1, queue: { size: 4, timeoutMs: 30_000 } };
    await first.definePool("doomed", settings);
    await second.definePool("doomed", settings);
    // Outcomes caught at once: the removal may reach them before removePool itself returns.
    const failureOf = (promise: Promise<unknown>) =>
      promise.then(
        () => null,
        (error) => error,
      );
    const working = failureOf(
      second.run(
        "doomed",
        ({ signal }) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener("abort", () => reject(signal.reason));
          }),
      ),
    );
    await expect.poll(async () => (await first.status("doomed")).held).toBe(1);
    const waiting = failureOf(second.acquire("doomed", { waitMs: 30_000 }));
    await expect.poll(async () => (await first.status("doomed")).queued).toBe(1);

    const startedAt = Date.now();
    await first.removePool("doomed");
    expect(await waiting).toBeInstanceOf(PoolNotFoundError);
    expect(await working).toBeInstanceOf(PoolNotFoundError);
    // Well before the 30 s wait, or the next renewal, would have told them.
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    // The second process still defines the pool: its next acquire brings it back.
    const again = await second.acquire("doomed");
    await expect(second.release("doomed", again.slotId)).resolves.toEqual({ released: true });
  });

  it("refuses unknown and out-of-range options instead of defaulting them silently", async () => {
    const misspelt = createRedisGovernor({
      url: REDIS_URL,
      keyPrefix: "app:",
      failurePolicy: "bogus",
      commandTimeoutMs: -1,
    } as never);
    await expect(misspelt).rejects.toMatchObject({ code: "invalid_argument" });
    const error = (await misspelt.catch((failure: unknown) => failure)) as { issues: string[] };
    expect([...error.issues].sort()).toEqual([
      "commandTimeoutMs: Invalid value: Expected >=1 but received -1",
      'failurePolicy: Must be "closed" or "open".',
      "keyPrefix: Not an option of the Redis store.",
    ]);
  });

  it("rejects with StoreUnavailableError when Redis cannot be reached (fail closed)", async () => {
    const refused = createRedisGovernor({ url: "redis://127.0.0.1:1", commandTimeoutMs: 200 });
    await expect(refused).rejects.toBeInstanceOf(StoreUnavailableError);
    // Said plainly, not as ioredis's spent retry budget.
    await expect(refused).rejects.toThrow(/^Redis is unavailable: no connection$/);
  });

  it("starts on per-process limits when Redis cannot be reached and the policy is open", async () => {
    const local = await governor({
      url: "redis://127.0.0.1:1",
      failurePolicy: "open",
      commandTimeoutMs: 200,
    });
    await local.definePool("solo", { maxConcurrent: 1 });
    const grant = await local.acquire("solo");
    await expect(local.acquire("solo")).rejects.toBeInstanceOf(RejectedError);
    await expect(local.release("solo", grant.slotId)).resolves.toEqual({ released: true });
  });

  it("caps a reported pause at MAX_PAUSE_MS in every process, and resetLearned clears it in all", async () => {
    const first = await governor();
    const second = await governor();
    await first.definePool("paused", { maxConcurrent: 2 });
    await second.definePool("paused", { maxConcurrent: 2 });
    const grant = await first.acquire("paused");
    const before = Date.now();
    // Ten years, as a caller (or an upstream's Retry-After) may claim.
    await first.release("paused", grant.slotId, { status: 429, retryAfterMs: 315_576_000_000 });
    const { pausedUntil } = (await second.status("paused")).learned;
    expect(pausedUntil).toBeGreaterThanOrEqual(before + MAX_PAUSE_MS);
    expect(pausedUntil).toBeLessThanOrEqual(Date.now() + MAX_PAUSE_MS);
    const refused = await second.acquire("paused").catch((error) => error);
    expect(refused).toBeInstanceOf(RejectedError);
    expect((refused as RejectedError).retryAfterMs).toBeLessThanOrEqual(MAX_PAUSE_MS);

    await first.resetLearned("paused");
    const admitted = await second.acquire("paused");
    await second.release("paused", admitted.slotId, { status: 200 });
    expect((await first.status("paused")).learned.pausedUntil).toBe(0);
  });
});
