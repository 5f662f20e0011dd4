/** The oldest Redis the scripts and events run on (sharded Pub/Sub, `SPUBLISH`, came in 7.0). */
export const MIN_REDIS_VERSION = "7.0.0";

/**
 * What is wrong with a Redis server for Sluice, read from its `INFO server` and `INFO memory`
 * text: each entry is a sentence for an operator. Empty when nothing is.
 *
 * - An eviction policy other than `noeviction` lets Redis drop Sluice's keys under memory
 *   pressure: a dropped holders set or queue forgets slots in use and waiters, and the pool
 *   then admits more than its limit.
 * - A server older than {@link MIN_REDIS_VERSION} lacks commands the scripts and events use.
 *
 * @example
 * ```ts
 * const info = `${await redis.info("server")}\n${await redis.info("memory")}`;
 * for (const warning of redisServerWarnings(info)) console.warn(warning);
 * ```
 */
export function redisServerWarnings(info: string): string[] {
  const fields = infoFields(info);
  const warnings: string[] = [];
  const policy = fields.get("maxmemory_policy");
  if (policy !== undefined && policy !== "noeviction") {
    warnings.push(
      `Redis evicts keys under memory pressure (maxmemory-policy ${policy}): evicted slot or ` +
        "queue keys let a pool admit more than its limit. Set maxmemory-policy noeviction " +
        "on the Redis Sluice uses.",
    );
  }
  const version = fields.get("redis_version");
  if (version !== undefined && olderThan(version, MIN_REDIS_VERSION)) {
    warnings.push(
      `Redis ${version} is older than ${MIN_REDIS_VERSION}, which Sluice needs ` +
        "(sharded Pub/Sub): waiters in other processes will not be woken.",
    );
  }
  return warnings;
}

/** `INFO` text (`key:value` lines, `#` section headers) as a map. */
function infoFields(info: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

function olderThan(version: string, minimum: string): boolean {
  const have = version.split(".").map(Number);
  const need = minimum.split(".").map(Number);
  for (let i = 0; i < need.length; i++) {
    const part = have[i] ?? 0;
    if (Number.isNaN(part)) return false;
    if (part !== need[i]) return part < need[i]!;
  }
  return false;
}
