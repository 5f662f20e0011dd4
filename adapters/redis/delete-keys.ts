import { DEFAULT_REDIS_URL, redisClient } from "./connection.js";
import { RedisKeys } from "./keys.js";

/**
 * Deletes every key Sluice keeps under `prefix` on the Redis at `url` (a test run's, a demo's,
 * or a retired deployment's prefix); answers how many went. Scans, so it never blocks Redis
 * the way `KEYS` would. Only for a prefix no running store uses any more.
 *
 * @example
 * ```ts
 * await deleteKeysUnder("sluice-demo:", "redis://127.0.0.1:6379");
 * ```
 */
export async function deleteKeysUnder(prefix: string, url = DEFAULT_REDIS_URL): Promise<number> {
  const client = new (redisClient())(url, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    const pattern = new RedisKeys(prefix).pattern();
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", pattern, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.del(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return deleted;
}
