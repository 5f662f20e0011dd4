import type { Cluster } from "ioredis";
import type { Clock } from "../../src/clock/clock.js";
import { systemClock } from "../../src/clock/clock.js";
import type { RedisClient } from "./cluster.js";
import { ConnectionHealth, type StoreHealth } from "./health.js";
import { CLUSTER_SLOTS, keySlot, tagInSlots } from "./key-slot.js";

/**
 * Part of the slot state that fails and recovers as one: a single Redis is one shard (its
 * `slots` null: every group), a Redis Cluster has one per master (the hash slots it held when
 * it was found down, kept as they were: a replica promoted meanwhile took over that data and
 * may have lost its latest writes, so it is the same shard).
 */
export interface Shard {
  /** The master it was found on (`host:port`), or `redis` for the whole store. */
  readonly id: string;
  readonly slots: ReadonlySet<number> | null;
  /** A hash tag in the shard: its probe, and the node to read the time from. */
  readonly tag: string | null;
  /** True for a group (by hash tag) that lives in this shard. */
  covers(tag: string): boolean;
}

/** Where a failure was met: a group (hash tag), a cluster node, or the whole store. */
export type FailureSite = { tag: string } | { node: string } | { whole: true } | null;

/** Tuning and hooks of {@link ShardHealth}. */
export interface ShardHealthOptions {
  client: RedisClient;
  downState: "degraded" | "unavailable";
  /** A write into the shard; resolves when it accepts commands again. */
  probe(shard: Shard): Promise<void>;
  /** Work to finish before the shard is reported ok again (see `recovery.ts`). */
  recover(shard: Shard): Promise<void>;
  probeMinMs: number;
  probeMaxMs: number;
  clock?: Clock;
}

/** The whole store as one shard (a single Redis, or a cluster nobody can reach). */
const WHOLE: Shard = { id: "redis", slots: null, tag: null, covers: () => true };

/**
 * The store's health per shard: a failure met on a group marks down the shard holding it
 * (every group of the failed master), and only groups there follow the failure policy; each
 * down shard has its own probe and recovery ({@link ConnectionHealth}), and is forgotten once
 * recovered. The store's status is ok while no shard is down. A single Redis is one shard,
 * so it behaves as one {@link ConnectionHealth}.
 *
 * @example
 * ```ts
 * const health = new ShardHealth({ client, downState: "unavailable", probe, recover, probeMinMs: 100, probeMaxMs: 2000 });
 * if (!health.upFor("{p:llm}")) throw redisUnavailable(health.reasonFor("{p:llm}"));
 * ```
 */
export class ShardHealth {
  private readonly down = new Map<string, { shard: Shard; monitor: ConnectionHealth }>();
  private readonly listeners = new Set<(status: StoreHealth) => void>();
  private readonly shardListeners = new Set<(shard: Shard, up: boolean) => void>();
  private readonly clock: Clock;
  private status: StoreHealth;
  /** The slot owners of the map before the client's last refresh (a master it dropped). */
  private previousOwners: readonly (string | undefined)[] = [];
  private closed = false;

  constructor(private readonly options: ShardHealthOptions) {
    this.clock = options.clock ?? systemClock;
    this.status = { state: "ok", since: this.clock.now(), reason: null };
    if (options.client.isCluster) {
      let current = owners(options.client as Cluster);
      options.client.on("refresh", () => {
        this.previousOwners = current;
        current = owners(options.client as Cluster);
      });
    }
  }

  /** No shard is down. */
  get up(): boolean {
    return this.down.size === 0;
  }

  /** The group (by hash tag) is in no shard that is down. */
  upFor(tag: string): boolean {
    if (this.down.size === 0) return true;
    for (const { shard } of this.down.values()) if (shard.covers(tag)) return false;
    return true;
  }

  /** Why the group's shard is down (the store's reason when the group is not known). */
  reasonFor(tag: string): string | null {
    for (const { shard, monitor } of this.down.values()) {
      if (shard.covers(tag)) return monitor.current().reason;
    }
    return this.status.reason;
  }

  current(): StoreHealth {
    return { ...this.status };
  }

  /** Calls `listener` when the store's status changes (state or reason). */
  onChange(listener: (status: StoreHealth) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` when a shard goes down (`up` false) or is back and recovered (true). */
  onShard(listener: (shard: Shard, up: boolean) => void): () => void {
    this.shardListeners.add(listener);
    return () => this.shardListeners.delete(listener);
  }

  /**
   * A call failed where `site` says: marks its shard down and starts probing it. A failure
   * of a cluster that names no group or node (a keyless command) marks nothing: the calls
   * into the failed shard find it.
   */
  markDown(error: unknown, site: FailureSite): void {
    if (this.closed) return;
    const shard = this.locate(site);
    if (!shard) return;
    const known = this.down.get(shard.id);
    if (known) known.monitor.markDown(error);
    else this.markShard(shard, error);
  }

  /** The shard a failure belongs to: one already down that holds the group, or its master's. */
  private locate(site: FailureSite): Shard | null {
    const client = this.options.client;
    if (!client.isCluster || (site !== null && "whole" in site)) return WHOLE;
    if (site === null) return null;
    const cluster = client as Cluster;
    if ("node" in site) {
      return (
        this.shardOf(site.node, owners(cluster)) ?? this.shardOf(site.node, this.previousOwners)
      );
    }
    for (const { shard } of this.down.values()) if (shard.covers(site.tag)) return shard;
    const master = cluster.slots[keySlot(site.tag)]?.[0];
    // No slot map yet: the cluster as a whole cannot be reached.
    if (master === undefined) return WHOLE;
    return this.shardOf(master, owners(cluster));
  }

  /** The client reconnected: every down shard probes now. */
  nudge(): void {
    for (const { monitor } of this.down.values()) monitor.nudge();
  }

  close(): void {
    this.closed = true;
    for (const { monitor } of this.down.values()) monitor.close();
    this.down.clear();
    this.listeners.clear();
    this.shardListeners.clear();
  }

  private shardOf(master: string, slotOwners: readonly (string | undefined)[]): Shard | null {
    const slots = new Set<number>();
    for (let slot = 0; slot < slotOwners.length; slot++) {
      if (slotOwners[slot] === master) slots.add(slot);
    }
    if (slots.size === 0) return null;
    return {
      id: master,
      slots,
      tag: tagInSlots(slots),
      covers: (tag) => slots.has(keySlot(tag)),
    };
  }

  private markShard(shard: Shard, error: unknown): void {
    const monitor = new ConnectionHealth({
      downState: this.options.downState,
      probe: () => this.options.probe(shard),
      recover: () => this.options.recover(shard),
      probeMinMs: this.options.probeMinMs,
      probeMaxMs: this.options.probeMaxMs,
      clock: this.options.clock,
    });
    this.down.set(shard.id, { shard, monitor });
    monitor.onChange((status) => {
      if (status.state !== "ok") return;
      this.down.delete(shard.id);
      monitor.close();
      this.changed(shard, true);
    });
    monitor.markDown(error);
    this.changed(shard, false);
  }

  private changed(shard: Shard, up: boolean): void {
    const entries = [...this.down.values()];
    const reasons = entries.map(({ shard: downShard, monitor }) => {
      const reason = monitor.current().reason;
      // Each down master named once (a lost connection's reason names it already).
      if (downShard.slots === null || reason?.includes(downShard.id)) return reason;
      return `Redis Cluster master ${downShard.id}: ${reason}`;
    });
    const reason = entries.length === 0 ? null : reasons.join("; ");
    const state = entries.length === 0 ? "ok" : this.options.downState;
    const downSlots = entries.reduce(
      (sum, entry) =>
        entry.shard.slots === null ? Number.POSITIVE_INFINITY : sum + entry.shard.slots.size,
      0,
    );
    const partial = entries.length > 0 && downSlots < CLUSTER_SLOTS;
    const statusChanged =
      state !== this.status.state ||
      reason !== this.status.reason ||
      partial !== (this.status.partial ?? false);
    if (statusChanged) {
      const since = state === this.status.state ? this.status.since : this.clock.now();
      this.status = partial ? { state, since, reason, partial } : { state, since, reason };
    }
    for (const listener of this.shardListeners) listener(shard, up);
    if (statusChanged) for (const listener of this.listeners) listener({ ...this.status });
  }
}

/** The master of every hash slot (`host:port`) in the client's slot map. */
function owners(cluster: Cluster): (string | undefined)[] {
  return Array.from({ length: CLUSTER_SLOTS }, (_, slot) => cluster.slots[slot]?.[0]);
}
