import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach } from "vitest";
import {
  createRedisSlotStore,
  deleteKeysUnder,
  RedisKeys,
  type RedisSlotStore,
  type RedisSlotStoreOptions,
} from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { HeldSlot } from "../../src/store/types.js";

/** The Redis the tests use. */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

async function redisAnswers(): Promise<boolean> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1_000,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Whether a real Redis answers. Under CI a missing Redis fails the run; locally the Redis
 * tests are skipped with a loud warning.
 */
export async function requireRedis(suite: string): Promise<boolean> {
  if (await redisAnswers()) return true;
  const message = `Redis does not answer at ${REDIS_URL}: ${suite} cannot run.`;
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`\n!!! ${message} Skipping (start redis-server or set REDIS_URL). !!!\n`);
  return false;
}

/** A prefix no other test file or run shares. */
export function uniquePrefix(suite: string): string {
  return `sluice-test:${suite}:${randomUUID().slice(0, 8)}:`;
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(prefix: string): Promise<void> {
  await deleteKeysUnder(prefix, REDIS_URL);
}

/** Keys left under `prefix` (to assert cleanup and layout). */
export async function keysUnder(prefix: string): Promise<string[]> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    return (await client.keys(new RedisKeys(prefix).pattern())).sort();
  } finally {
    client.disconnect();
  }
}

/** A store on the test Redis under `prefix`, driven by a ManualClock unless told otherwise. */
export async function openStore(
  prefix: string,
  options: Partial<RedisSlotStoreOptions> = {},
): Promise<{ store: RedisSlotStore; clock: ManualClock }> {
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock();
  const store = createRedisSlotStore({ url: REDIS_URL, prefix, clock, ...options });
  await store.ready();
  return { store, clock };
}

/**
 * The stores one describe block opens under its own fresh prefix, each recording the
 * handoffs it reports; they are closed, and their keys deleted, after every test.
 *
 * @example
 * ```ts
 * const stores = recordingStores("fast-path");
 * const { store, grants } = await stores.open(new ManualClock());
 * ```
 */
export function recordingStores(suite: string) {
  const prefix = uniquePrefix(suite);
  const opened: RedisSlotStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));
  return {
    prefix,
    async open(clock: ManualClock): Promise<{ store: RedisSlotStore; grants: HeldSlot[] }> {
      const { store } = await openStore(prefix, { clock });
      opened.push(store);
      const grants: HeldSlot[] = [];
      store.setListener({ granted: (_pool, slot) => grants.push(slot), reclaimed() {} });
      return { store, grants };
    },
  };
}
