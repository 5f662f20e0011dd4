import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor, GovernorOptions } from "../../src/governor/types.js";
import { createRedisSlotStore } from "./create-redis-slot-store.js";
import type { RedisSlotStoreOptions } from "./options.js";

/**
 * Options of {@link createRedisGovernor}: the Redis store's options plus the governor's. A
 * `clock` (tests) drives both the governor and the store's scripts, in place of Redis `TIME`.
 */
export interface RedisGovernorOptions
  extends Omit<RedisSlotStoreOptions, "clock">,
    Omit<GovernorOptions, "store"> {}

/**
 * A governor whose slots live in Redis: every process that creates one with the same `url`
 * and `prefix` shares one limit, one queue, one RPM gate and one learned limit per pool.
 * Resolves once Redis answers and cross-process wake-ups are live; with the default
 * `failurePolicy: "closed"` it rejects with `StoreUnavailableError` when Redis cannot be
 * reached (nothing is left open), with `"open"` it starts on per-process limits and joins
 * Redis when it answers.
 *
 * @example
 * ```ts
 * import { createRedisGovernor } from "sluice/redis";
 * const governor = await createRedisGovernor({ url: "redis://127.0.0.1:6379" });
 * await governor.definePool("openai", { maxConcurrent: 8, rpm: 500 });
 * const answer = await governor.run("openai", () => callTheUpstream(), { waitMs: 10_000 });
 * ```
 */
export async function createRedisGovernor(options: RedisGovernorOptions = {}): Promise<Governor> {
  const { clock, metrics, ...storeOptions } = options;
  const store = createRedisSlotStore({ ...storeOptions, clock });
  try {
    await store.ready();
  } catch (error) {
    if (storeOptions.failurePolicy !== "open") {
      await store.close();
      throw error;
    }
  }
  return createGovernor({ store, clock, metrics });
}
