import type { RedisSlotStoreOptions } from "./options.js";
import { RedisSlotStore } from "./redis-slot-store.js";

/**
 * Creates a {@link RedisSlotStore}. Connects at once; `await store.ready()` to be sure the
 * event subscription is live before relying on cross-process handoffs.
 *
 * @example
 * ```ts
 * const store = createRedisSlotStore({ url: "redis://127.0.0.1:6379", prefix: "myapp:" });
 * await store.ready();
 * const governor = createGovernor({ store });
 * ```
 */
export function createRedisSlotStore(options: RedisSlotStoreOptions = {}): RedisSlotStore {
  return new RedisSlotStore(options);
}
