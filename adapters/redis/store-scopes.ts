import type { RedisKeys } from "./keys.js";
import { EVERYTHING, type RecoveryScope } from "./recovery.js";
import type { Shard } from "./shard-health.js";

/**
 * The scopes a store's recoveries work on, by where each group lives: a shard of a cluster
 * (the whole store for a single Redis), one group that lost its data, or every group on a
 * shard that is up. `tagOf` answers the hash tag of the group a pool lives in.
 *
 * @example
 * ```ts
 * const scopes = new StoreScopes(keys, (pool) => engine.tagOf(pool) ?? keys.groupTag(pool, null));
 * await resyncAfterOutage({ ...parts, scope: scopes.ofShard(shard) });
 * ```
 */
export class StoreScopes {
  constructor(
    private readonly keys: RedisKeys,
    readonly tagOf: (pool: string) => string,
  ) {}

  /** The groups of a shard. */
  ofShard(shard: Shard): RecoveryScope {
    return shard.slots === null ? EVERYTHING : this.where(shard.tag, shard.covers);
  }

  /** One group (by hash tag). */
  ofGroup(tag: string): RecoveryScope {
    return this.where(tag, (other) => other === tag);
  }

  /** The groups `covers` accepts (by hash tag); `at`: a tag on the node that holds them. */
  where(at: string | null, covers: (tag: string) => boolean): RecoveryScope {
    return {
      at,
      tag: covers,
      pool: (pool) => covers(this.tagOf(pool)),
      budget: (budget) => covers(this.keys.budgetTag(budget)),
    };
  }
}
