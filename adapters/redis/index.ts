export { DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_REDIS_URL } from "./connection.js";
export type { RedisGovernorOptions } from "./create-redis-governor.js";
export { createRedisGovernor } from "./create-redis-governor.js";
export { createRedisSlotStore } from "./create-redis-slot-store.js";
export { deleteKeysUnder } from "./delete-keys.js";
export type { StoreHealth, StoreState } from "./health.js";
export { DEFAULT_KEY_PREFIX, RedisKeys } from "./keys.js";
export type { FailurePolicy, RedisSlotStoreOptions, RedisStoreStats } from "./options.js";
export { RedisSlotStore } from "./redis-slot-store.js";
