import { InvalidArgumentError } from "../../src/errors.js";
import { isClusterUrl, masters, openCluster, type RedisClusterTarget } from "./cluster.js";
import { DEFAULT_REDIS_URL, redisClient } from "./connection.js";
import { RedisKeys } from "./keys.js";

/**
 * Deletes every key Sluice keeps under `prefix` on the Redis at `url` (a test run's, a demo's,
 * or a retired deployment's prefix); answers how many went. Scans, so it never blocks Redis
 * the way `KEYS` would. On a cluster (a `redis+cluster://` URL or `{ nodes }`) every master
 * is scanned, and each key is deleted on its own (keys of different groups live in
 * different hash slots). Only for a prefix no running store uses any more. The prefix must be
 * a non-empty string: an empty one would match every key on the server, Sluice's or not.
 *
 * @example
 * ```ts
 * await deleteKeysUnder("sluice-demo:", "redis://127.0.0.1:6379");
 * await deleteKeysUnder("sluice-demo:", { nodes: ["127.0.0.1:7000"] });
 * ```
 */
export async function deleteKeysUnder(
  prefix: string,
  where: string | RedisClusterTarget = DEFAULT_REDIS_URL,
): Promise<number> {
  // Before connecting: `""` (an unset variable's `?? ""`) would scan `*` and delete the whole
  // database, and a missing argument would fall back to the default deployment's `sluice:`.
  if (typeof prefix !== "string" || prefix === "") {
    throw new InvalidArgumentError(
      `deleteKeysUnder needs the prefix to clear, a non-empty string (got ${JSON.stringify(prefix) ?? typeof prefix}): it never deletes every key.`,
    );
  }
  const onCluster = typeof where !== "string" || isClusterUrl(where);
  const client = onCluster
    ? openCluster(where, { maxRetriesPerRequest: 1 }, false)
    : new (redisClient())(where as string, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    // The cluster's nodes are known once it answered.
    await client.ping();
    const pattern = new RedisKeys(prefix).pattern();
    for (const node of masters(client)) {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 500);
        cursor = next;
        // One DEL per key: a cluster refuses a command whose keys lie in different slots.
        if (keys.length > 0) {
          const pipeline = node.pipeline();
          for (const key of keys) pipeline.del(key);
          const results = (await pipeline.exec()) ?? [];
          for (const [error, count] of results) {
            if (error) throw error;
            deleted += Number(count);
          }
        }
      } while (cursor !== "0");
    }
  } finally {
    client.disconnect();
  }
  return deleted;
}
