import { createRedisSlotStore, type RedisSlotStoreOptions } from "../../adapters/redis/index.js";
import type { StoreHarness } from "../store-conformance/store-conformance.js";
import { uniquePrefix } from "./redis-harness.js";
import { SettlingClock, trackCalls } from "./settling-clock.js";

/**
 * The harness the store conformance suites get for a Redis store: a fresh store per test on
 * `where` (one Redis or a cluster), under its own key prefix so no state leaks between tests
 * (recorded in `prefixes`, for a last clean-up), and removed after it with `deleteUnder`. Its
 * clock lets each instant's scripts answer before time moves on (see SettlingClock): the
 * suites judge the store, not a round trip the manual clock would stretch over virtual time.
 *
 * @example
 * ```ts
 * describeStoreConformance("redis", redisStoreHarness(() => ({ url: REDIS_URL }), deleteKeys));
 * ```
 */
export function redisStoreHarness(
  where: () => Pick<RedisSlotStoreOptions, "url" | "cluster">,
  deleteUnder: (prefix: string) => Promise<void>,
  prefixes: string[] = [],
): () => Promise<StoreHarness> {
  return async () => {
    const clock = new SettlingClock();
    const prefix = uniquePrefix("conformance");
    prefixes.push(prefix);
    const store = trackCalls(createRedisSlotStore({ ...where(), prefix, clock }), clock);
    await store.ready();
    return {
      store,
      clock,
      cleanup: async () => {
        await store.close();
        await deleteUnder(prefix);
      },
    };
  };
}
