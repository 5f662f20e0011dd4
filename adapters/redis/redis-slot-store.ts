import { randomUUID } from "node:crypto";
import type { Clock } from "../../src/clock/clock.js";
import { systemClock } from "../../src/clock/clock.js";
import { StoreUnavailableError } from "../../src/errors.js";
import type {
  LearnedLimits,
  PoolSnapshot,
  SlotStore,
  StoreAcquireRequest,
  StoreAcquireResult,
  StoreCancelResult,
  StoreInspectResult,
  StoreListener,
  StorePoolConfig,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";
import { clusterReady, masters, type RedisClient, refreshSlotMap } from "./cluster.js";
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  openConnections,
  redisUnavailable,
  type StoreConnections,
  toStoreError,
} from "./connection.js";
import { watchConnections } from "./connection-watch.js";
import { DataLossWatch } from "./data-loss-watch.js";
import { Definitions } from "./definitions.js";
import { EventSubscriptions } from "./event-subscriptions.js";
import type { StoreHealth } from "./health.js";
import { IdleTracker } from "./idle-tracker.js";
import { DEFAULT_KEY_PREFIX, RedisKeys } from "./keys.js";
import { LocalFallback } from "./local-fallback.js";
import {
  checkRedisSlotStoreOptions,
  DEFAULT_RESTORE_GRACE_MS,
  type RedisSlotStoreOptions,
  type RedisStoreStats,
} from "./options.js";
import { ProcessLedger } from "./process-ledger.js";
import { type RecoveryScope, resyncAfterOutage } from "./recovery.js";
import { RedisEngine } from "./redis-engine.js";
import { NOT_RELEASED, type RedisListener, UNKNOWN } from "./replies.js";
import { ScriptRunner } from "./script-runner.js";
import { loadScripts } from "./scripts.js";
import { redisServerWarnings } from "./server-check.js";
import { type Shard, ShardHealth } from "./shard-health.js";
import { StoreScopes } from "./store-scopes.js";

const NOOP_LISTENER: StoreListener = { granted() {}, reclaimed() {} };

/**
 * A {@link SlotStore} in Redis, so several Sluice processes share one limit, one FIFO queue,
 * one RPM gate, one budget and one learned limit per pool. Every state change is one atomic
 * Lua script (one round trip); handoffs to waiters of other processes travel by Pub/Sub;
 * leases and gates run on the server's TIME. See `adapters/redis/README.md`.
 *
 * @example
 * ```ts
 * const store = createRedisSlotStore({ url: process.env.REDIS_URL, failurePolicy: "open" });
 * const governor = createGovernor({ store });
 * store.onStatus((status) => console.log("slot store", status.state));
 * ```
 */
export class RedisSlotStore implements SlotStore {
  readonly kind = "redis";
  private readonly connections: StoreConnections;
  private readonly keys: RedisKeys;
  private readonly runner: ScriptRunner;
  private readonly engine: RedisEngine;
  /** Health per shard: a single Redis is one, a cluster has one per master. */
  private readonly monitor: ShardHealth;
  private readonly scopes: StoreScopes;
  private readonly local: LocalFallback | null;
  private readonly definitions = new Definitions();
  private readonly idle = new IdleTracker();
  private readonly clock: Clock | null;
  /** This process's id: the owner recorded with its slots and waiters, and its event channel. */
  private readonly originId = randomUUID();
  private listener: StoreListener = NOOP_LISTENER;
  private readonly events: EventSubscriptions;
  private readonly started: Promise<void>;
  /** This process's waiters and slots in Redis, put back after an outage or a blip. */
  private readonly ledger: ProcessLedger;
  /** Tells a Redis that lost its data while connected (a flush) from a removed pool. */
  private readonly dataLoss: DataLossWatch;
  private closed = false;
  private readonly commandTimeoutMs: number;

  constructor(options: RedisSlotStoreOptions = {}) {
    checkRedisSlotStoreOptions(options);
    const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.commandTimeoutMs = commandTimeoutMs;
    const policy = options.failurePolicy ?? "closed";
    this.clock = options.clock ?? null;
    this.keys = new RedisKeys(options.prefix ?? DEFAULT_KEY_PREFIX);
    this.connections = openConnections(options, commandTimeoutMs);
    this.runner = new ScriptRunner(this.connections.command, loadScripts());
    this.local =
      policy === "open"
        ? new LocalFallback(
            options.clock ?? systemClock,
            () => this.listener,
            // Redis may still queue it: cancelled there once back (a slot it got goes back).
            (pool, slotId) => this.ledger.cancelLater(pool, slotId),
          )
        : null;
    this.scopes = new StoreScopes(this.keys, (pool) => this.tagOf(pool));
    const resync = (scope: RecoveryScope) =>
      resyncAfterOutage({
        scope,
        runner: this.runner,
        engine: this.engine,
        events: this.events,
        definitions: this.definitions,
        local: this.local,
        ledger: this.ledger,
        // Redis time, as lease deadlines are (the store's own now() is local while down).
        now: () => (this.clock ? this.clock.now() : this.engine.now(scope.at)),
      });
    this.dataLoss = new DataLossWatch({
      runner: this.runner,
      subscriber: this.connections.subscriber,
      keys: this.keys,
      idle: this.idle,
      recover: (tag) => resync(this.scopes.ofGroup(tag)),
    });
    this.monitor = new ShardHealth({
      client: this.connections.command,
      downState: policy === "open" ? "degraded" : "unavailable",
      probe: (shard) => this.probe(shard),
      recover: async (shard) => {
        const scope = this.scopes.ofShard(shard);
        await this.dataLoss.establish(scope.tag);
        await resync(scope);
      },
      probeMinMs: options.recoveryProbeMs?.min ?? 100,
      probeMaxMs: options.recoveryProbeMs?.max ?? 2_000,
    });
    // Failure policy "open": the local limit counts the Redis slots still at work on the shard
    // that went, and this process's Redis waiters there queue locally, ahead of newcomers,
    // instead of waiting for nothing.
    this.monitor.onShard((shard, up) => {
      const local = this.local;
      if (up || !local) return;
      const inShard = this.scopes.ofShard(shard).pool;
      local.reserve(this.ledger.held.list().filter(({ pool }) => inShard(pool)));
      const waiters = this.ledger.queued.rejoining().filter(({ pool }) => inShard(pool));
      for (const slotId of local.takeWaiters(waiters)) this.ledger.queued.delete(slotId);
    });
    this.events = new EventSubscriptions(this.connections.subscriber, this.keys, this.originId);
    this.ledger = new ProcessLedger(options.clock ?? systemClock);
    const listener = this.movedWaitersFilter(this.ledger.listener(() => this.listener));
    this.engine = new RedisEngine({
      runner: this.runner,
      keys: this.keys,
      clock: this.clock,
      timerClock: options.clock ?? systemClock,
      originId: this.originId,
      events: this.events,
      idle: this.idle,
      pools: this.definitions.pools,
      restoreGraceMs: Math.max(0, options.restoreGraceMs ?? DEFAULT_RESTORE_GRACE_MS),
      budgets: this.definitions.budgets,
      listener: () => listener,
      onUnavailable: (error, tag) => this.monitor.markDown(error, tag === null ? null : { tag }),
      checkDataLoss: (tag) => this.dataLoss.check(tag),
      knowGroup: (tag) => this.dataLoss.know(tag),
    });
    watchConnections({
      connections: this.connections,
      monitor: this.monitor,
      scopeOf: (shard) => this.scopes.ofShard(shard),
      upScope: () => this.scopes.where(null, (tag) => this.monitor.upFor(tag)),
      events: this.events,
      engine: this.engine,
      ledger: this.ledger,
      idle: this.idle,
      dataLoss: this.dataLoss,
      closed: () => this.closed,
    });
    this.started = this.start();
    this.started.catch(() => {});
  }

  /**
   * Resolves once the scripts are cached on the server; rejects with `StoreUnavailableError`
   * when Redis does not answer in time. Optional: operations work before it (the process
   * subscribes to a group's events before its first call there).
   */
  ready(): Promise<void> {
    return this.started;
  }

  now(): number | Promise<number> {
    if (this.clock) return this.clock.now();
    if (this.local && !this.monitor.up) return Date.now();
    return this.engine.now().catch((error: unknown) => {
      if (this.local && error instanceof StoreUnavailableError) return Date.now();
      throw error;
    });
  }

  setListener(listener: StoreListener): void {
    this.listener = listener;
  }

  async upsertBudget(budget: string, originMaxConcurrent: number | null): Promise<void> {
    this.definitions.defineBudget(budget, originMaxConcurrent);
    this.local?.upsertBudget(budget, originMaxConcurrent);
    await this.remote(
      this.keys.budgetTag(budget),
      () => this.engine.upsertBudget(budget, originMaxConcurrent),
      undefined,
    );
  }

  async removeBudget(budget: string): Promise<void> {
    this.definitions.removeBudget(budget);
    this.local?.removeBudget(budget);
    await this.remote(
      this.keys.budgetTag(budget),
      async () => {
        await this.engine.removeBudget(budget);
        this.definitions.removedBudgets.delete(budget);
      },
      undefined,
    );
  }

  async upsertPool(pool: string, config: StorePoolConfig): Promise<void> {
    this.definitions.definePool(pool, config);
    this.local?.upsertPool(pool, config);
    const tag = this.keys.groupTag(pool, config.budget?.id ?? null);
    await this.remote(tag, () => this.engine.upsertPool(pool, config), undefined);
  }

  async removePool(pool: string): Promise<void> {
    const tag = this.tagOf(pool);
    this.definitions.removePool(pool);
    this.ledger.forgetPool(pool);
    this.local?.removePool(pool);
    await this.remote(
      tag,
      async () => {
        await this.engine.removePool(pool);
        this.definitions.removedPools.delete(pool);
      },
      undefined,
    );
  }

  async acquire(pool: string, request: StoreAcquireRequest): Promise<StoreAcquireResult> {
    const local = this.local;
    const tag = this.tagOf(pool);
    if (local && !this.monitor.upFor(tag)) return local.acquire(pool, request);
    let sent = false;
    return this.remote(
      tag,
      async () => {
        sent = true;
        try {
          const result = await this.engine.acquire(pool, request);
          this.ledger.acquired(pool, request.slotId, request.waitMs, result);
          return result;
        } catch (error) {
          // Timed out: a stalled Redis may still run it once it catches up, granting a slot
          // nobody knows of. It is cancelled there once Redis is back (a slot it got is
          // released); under "open" the fallback takes that over.
          if (error instanceof StoreUnavailableError && !local) {
            this.ledger.cancelLater(pool, request.slotId);
          }
          throw error;
        }
      },
      () => local!.acquire(pool, request, sent),
    );
  }

  async cancel(pool: string, slotId: string): Promise<StoreCancelResult> {
    this.ledger.done(slotId);
    if (this.local?.owns(slotId)) return this.local.cancel(pool, slotId);
    // A waiter queued in Redis cannot be reached: the governor gives up on it now, and the
    // cancel goes out once Redis is back, so the waiter is not served to nobody.
    return this.remoteOrLater(
      pool,
      async () => {
        const result = await this.engine.cancel(pool, slotId);
        this.ledger.cancelled(pool, result);
        return result;
      },
      () => this.ledger.cancelLater(pool, slotId),
      UNKNOWN,
    );
  }

  async renew(pool: string, slotId: string): Promise<StoreRenewResult> {
    if (this.local?.owns(slotId)) return this.local.renew(pool, slotId);
    this.local?.renewReserved(slotId);
    // Never "not_found" for a slot Redis may still hold: the governor retries the renewal.
    return this.remote(
      this.tagOf(pool),
      async () => {
        const result = await this.engine.renew(pool, slotId);
        this.ledger.renewed(slotId, result);
        return result;
      },
      null,
    );
  }

  async release(pool: string, slotId: string): Promise<StoreReleaseResult> {
    // Done with, whatever Redis answers; also drops the stale waiter entry of a slot handed
    // over before its "queued" answer arrived.
    this.ledger.done(slotId);
    if (this.local?.owns(slotId)) return this.local.release(pool, slotId);
    this.local?.releaseReserved(slotId);
    // Unconfirmed while Redis is away: sent again once it is back.
    return this.remoteOrLater(
      pool,
      () => this.engine.release(pool, slotId),
      () => this.ledger.releaseLater(pool, slotId),
      NOT_RELEASED,
    );
  }

  /** Null also when Redis cannot answer now: the release that follows reports that. */
  async inspect(pool: string, slotId: string): Promise<StoreInspectResult | null> {
    if (this.local?.owns(slotId)) return this.local.inspect(pool, slotId);
    if (this.closed || !this.monitor.upFor(this.tagOf(pool))) return null;
    try {
      return await this.engine.inspect(pool, slotId);
    } catch (error) {
      if (error instanceof StoreUnavailableError) return null;
      throw error;
    }
  }

  async setLearned(pool: string, learned: LearnedLimits): Promise<void> {
    this.definitions.learned.set(pool, learned);
    this.local?.setLearned(pool, learned);
    await this.remote(this.tagOf(pool), () => this.engine.setLearned(pool, learned), undefined);
  }

  async snapshot(pool: string): Promise<PoolSnapshot | null> {
    const local = this.local;
    return this.remote(
      this.tagOf(pool),
      () => this.engine.snapshot(pool),
      () => local!.snapshot(pool),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.engine.close();
    this.ledger.clear();
    this.monitor.close();
    this.local?.close();
    const { command, subscriber } = this.connections;
    await Promise.allSettled([quit(subscriber), quit(command)]);
  }

  async whenIdle(): Promise<void> {
    await this.idle.whenIdle();
  }

  /** The current status: ok, degraded (open policy, local fallback) or unavailable. */
  health(): StoreHealth {
    return this.monitor.current();
  }

  /** Calls `listener` on every status change; returns the function that unsubscribes. */
  onStatus(listener: (status: StoreHealth) => void): () => void {
    return this.monitor.onChange(listener);
  }

  /**
   * What is wrong with the Redis server for Sluice (see `redisServerWarnings`): an eviction
   * policy other than `noeviction`, a version older than 7.0. `sluice serve` logs them at
   * start; empty when nothing is. A server that refuses `INFO` gets one warning saying so.
   */
  async serverWarnings(): Promise<string[]> {
    try {
      // Every master of a cluster: each one's settings decide for the groups it holds.
      const infos = await this.runner.command((redis) =>
        Promise.all(masters(redis).map((node) => node.info())),
      );
      return [...new Set(infos.flatMap((info) => redisServerWarnings(info)))];
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return [
        `Could not read the Redis server's INFO (${why}); make sure its maxmemory-policy is noeviction.`,
      ];
    }
  }

  /** Round trips, script reloads and local operations so far, and the health state (benchmarks, status). */
  stats(): RedisStoreStats {
    const { roundTrips, scriptReloads } = this.runner.stats;
    const localOperations = this.local?.operations ?? 0;
    return {
      roundTrips,
      scriptReloads,
      scripting: this.runner.usesFunctions ? "functions" : "eval",
      localOperations,
      state: this.monitor.current().state,
    };
  }

  /** The hash tag of the group a pool lives in (where this process last found it). */
  private tagOf(pool: string): string {
    const budget = this.definitions.pools.get(pool)?.budget?.id ?? null;
    return this.engine.tagOf(pool) ?? this.keys.groupTag(pool, budget);
  }

  /**
   * Runs a Redis operation on the group `tag` under the failure policy: while its shard is
   * down, or when the call finds it unreachable, `fallback` answers (policy "open"), else
   * StoreUnavailableError is thrown at once. `undefined` as fallback: definitions, which the
   * local store already holds and Redis gets on recovery. `null`: always throw.
   */
  private async remote<T>(
    tag: string,
    operation: () => Promise<T>,
    fallback: (() => T) | undefined | null,
  ): Promise<T> {
    const canFallBack = this.local !== null && fallback !== null;
    if (this.closed) throw new StoreUnavailableError("The slot store is closed.");
    if (!this.monitor.upFor(tag)) {
      if (canFallBack) return (fallback ? fallback() : undefined) as T;
      throw redisUnavailable(this.monitor.reasonFor(tag));
    }
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || !canFallBack) throw error;
      return (fallback ? fallback() : undefined) as T;
    }
  }

  /**
   * {@link remote} for a release or a cancel, which must reach Redis eventually: whenever Redis
   * does not get it (down: `whileDown` answers under "open", it throws under "closed"),
   * `later` records it, to be sent again once the store is ok.
   */
  private async remoteOrLater<T>(
    pool: string,
    operation: () => Promise<T>,
    later: () => void,
    whileDown: T,
  ): Promise<T> {
    try {
      return await this.remote(this.tagOf(pool), operation, () => {
        later();
        return whileDown;
      });
    } catch (error) {
      if (error instanceof StoreUnavailableError) later();
      throw error;
    }
  }

  /**
   * Redis's events about a waiter moved to the local queue (a grant that was on its way as
   * Redis went, a reclaim) go nowhere until Redis is back: the recovery cancels such a waiter
   * in Redis first, and keeps the slot Redis gave it only when the caller still holds one.
   */
  private movedWaitersFilter(inner: RedisListener): RedisListener {
    const local = this.local;
    if (!local) return inner;
    const isMoved = (slotId: string) => local.moved(slotId);
    return {
      ...inner,
      granted: (pool, slot, queuedMs, waiter) => {
        if (!isMoved(slot.slotId)) inner.granted(pool, slot, queuedMs, waiter);
      },
      reclaimed: (pool, slotIds) => {
        const kept = slotIds.filter((slotId) => !isMoved(slotId));
        if (kept.length > 0) inner.reclaimed(pool, kept);
      },
    };
  }

  private async start(): Promise<void> {
    try {
      await this.clusterReady();
      await this.runner.preload();
      await this.dataLoss.listen();
    } catch (error) {
      const wrapped = toStoreError(error);
      if (wrapped instanceof StoreUnavailableError) this.monitor.markDown(wrapped, { whole: true });
      throw wrapped;
    }
  }

  /**
   * A write into the shard (a key in its slots), or any for the whole store. A cluster shard's
   * probe first refreshes both clients' slot maps, so a failover is followed when it happens.
   */
  private async probe(shard: Shard): Promise<void> {
    await this.clusterReady();
    if (shard.slots !== null) {
      await Promise.all(
        [this.connections.command, this.connections.subscriber].map(refreshSlotMap),
      );
    }
    const key = this.keys.probe(shard.tag);
    await this.runner.command((redis) => redis.set(key, "1", "PX", 60_000));
  }

  /**
   * Waits until a cluster client knows where its slots are (a single Redis: at once). Bounded
   * by three connection timeouts: a start-up node, its slot map, then every master and its
   * ready check.
   */
  private clusterReady(): Promise<void> {
    return clusterReady(this.connections.command, 3 * Math.max(this.commandTimeoutMs, 1_000));
  }
}

async function quit(connection: RedisClient): Promise<void> {
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
