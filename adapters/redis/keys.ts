/**
 * The one place that names Redis keys. Every key a script touches for a pool lives under the
 * pool's *group*: `<prefix>{b:<budget>}` for pools of a budget (siblings must be read in the
 * same atomic script, so they share one hash tag and one Cluster slot) and `<prefix>{p:<pool>}`
 * for a pool in no budget. Names are URI-encoded so `{`, `}` and `:` in a pool or budget name
 * can neither break the hash tag nor make two keys collide.
 *
 * Layout under a group base `B`:
 * - `B:pool:<pool>` hash: `cfg` (packed config and name), `lrn` (packed learned limits and
 *   grant-log capacity), `due` (lower bound of the lease deadlines), `trim` (grants trimmed
 *   off the log), `minwait` (lower bound of the waiters' deadlines); see `load_pool` in
 *   `lua/lib.lua`. Or, once the pool moved to another group, only `moved` = the new group's
 *   tag (a forwarding record).
 * - `B:holders:<pool>` sorted set slotId → leaseDeadline.
 * - `B:slots:<pool>` hash slotId →
 *   `seq:acquiredAt:leaseDeadline:requestDeadline:heldAtGrant:owner process`.
 * - `B:queue:<pool>` list of waiting slot ids, head first; `B:waiters:<pool>` hash slotId →
 *   `enqueuedAt:waitDeadline:owner process`.
 * - `B:log:<pool>` list of grant times, newest first (the RPM window).
 * - `B:budget` hash (`origin`) and `B:members` list of pool names in join order (budget groups).
 * - `B:epoch`: the random value that tells a group whose shard lost its data (a flush, a
 *   master restarted empty) from a pool another process removed (see `data-loss-watch.ts`).
 *
 * - `B:events:<process id>`: not a key but the sharded Pub/Sub channel of one process's
 *   handoffs and reclaims in the group.
 *
 * Outside groups: `<prefix>{p:<pool>}:home` names the group a pool lives in (read when a
 * process first defines the pool), `<prefix>{probe}` (or, for one shard of a cluster,
 * `<prefix>{probe:<n>}` in its slots) is written by the recovery probe, and the plain Pub/Sub
 * channel `<prefix>{epoch}` announces a group's new epoch.
 *
 * @example
 * ```ts
 * const keys = new RedisKeys("sluice:");
 * keys.groupTag("llm", null); // "{p:llm}"
 * keys.groupBase(keys.groupTag("llm", "team-a")); // "sluice:{b:team-a}"
 * ```
 */
export class RedisKeys {
  constructor(
    /** Prefix of every key and channel (the store's `prefix` option). */
    readonly prefix = DEFAULT_KEY_PREFIX,
  ) {}

  /** The hash tag of the group a pool belongs to, given its budget (null: none). */
  groupTag(pool: string, budget: string | null): string {
    return budget === null ? `{p:${encodeName(pool)}}` : `{b:${encodeName(budget)}}`;
  }

  /** The tag of a budget's group (where its origin and member list live). */
  budgetTag(budget: string): string {
    return `{b:${encodeName(budget)}}`;
  }

  /** The base every key of a group starts with; scripts receive it as KEYS[1]. */
  groupBase(tag: string): string {
    return this.prefix + tag;
  }

  /** The pointer to the group a pool lives in (in the pool's own slot). */
  home(pool: string): string {
    return `${this.prefix}{p:${encodeName(pool)}}:home`;
  }

  /**
   * The sharded Pub/Sub channel on which one process hears a group's handoffs and reclaims of
   * its slots. It carries the group's hash tag, so on Redis Cluster it lives on the node that
   * holds the group; a script checks whether the waiter's process still listens before it
   * hands a slot over.
   */
  eventChannel(tag: string, processId: string): string {
    return `${this.prefix}${tag}:events:${processId}`;
  }

  /**
   * The key the recovery probe writes (a write proves the server accepts scripts again);
   * `tag`: in that hash tag's slot (a probe of one shard of a cluster).
   */
  probe(tag: string | null = null): string {
    return `${this.prefix}${tag ?? "{probe}"}`;
  }

  /** The channel that announces a group's new epoch (see `DataLossWatch`). */
  epoch(): string {
    return `${this.prefix}{epoch}`;
  }

  /** A group's epoch key (in the group's slot, so on the shard that holds the group). */
  groupEpoch(tag: string): string {
    return `${this.groupBase(tag)}:epoch`;
  }

  /** A `SCAN MATCH` pattern covering every key of this prefix (tests and tooling). */
  pattern(): string {
    return `${this.prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  }
}

/** Default key prefix. */
export const DEFAULT_KEY_PREFIX = "sluice:";

/**
 * The name as it appears inside keys: URI-encoded, so free of `{`, `}` and `:`.
 *
 * @example
 * ```ts
 * encodeName("a{b}:c"); // "a%7Bb%7D%3Ac"
 * ```
 */
export function encodeName(name: string): string {
  return encodeURIComponent(name);
}

/**
 * The key suffixes as Lua locals, prepended to every group script so the layout above is
 * written down once (here) and the scripts derive sibling pools' keys from KEYS[1].
 */
export const LUA_KEY_PRELUDE = [
  "local K_POOL = ':pool:'",
  "local K_HOLDERS = ':holders:'",
  "local K_SLOTS = ':slots:'",
  "local K_QUEUE = ':queue:'",
  "local K_WAITERS = ':waiters:'",
  "local K_LOG = ':log:'",
  "local K_BUDGET = ':budget'",
  "local K_MEMBERS = ':members'",
  "local K_EVENTS = ':events:'",
  "",
].join("\n");
