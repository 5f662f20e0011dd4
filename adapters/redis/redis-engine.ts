import type { Clock } from "../../src/clock/clock.js";
import { ConflictError, PoolNotFoundError, type StoreUnavailableError } from "../../src/errors.js";
import type {
  HeldSlot,
  LearnedLimits,
  PoolSnapshot,
  StoreAcquireRequest,
  StoreAcquireResult,
  StoreCancelResult,
  StoreInspectResult,
  StorePoolConfig,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";
import { nodeFor } from "./cluster.js";
import { type GroupEvents, GroupRunner, isBudgetGroup, type PoolRoute } from "./group-runner.js";
import type { IdleTracker } from "./idle-tracker.js";
import { encodeName, type RedisKeys } from "./keys.js";
import type { RejoiningWaiter } from "./queued-waiters.js";
import {
  dispatchEvents,
  movedTo,
  NOT_FOUND,
  NOT_RELEASED,
  type RedisListener,
  type ReplyFields,
  readAcquire,
  readAdopt,
  readCancel,
  readCreated,
  readInspect,
  readRejoin,
  readRelease,
  readRenew,
  readRetire,
  readSnapshot,
  resultType,
  type ScriptResult,
  UNKNOWN,
} from "./replies.js";
import { configArgs, learnedArgs, NOTHING_CARRIED, optionalArg, probeArgs } from "./script-args.js";
import type { ScriptRunner } from "./script-runner.js";
import type { GroupScriptName } from "./scripts.js";

/** What the engine needs from the store around it. */
export interface EngineDeps {
  runner: ScriptRunner;
  keys: RedisKeys;
  /** Injected clock: scripts get its `now`. Null: scripts read the server's TIME. */
  clock: Clock | null;
  /** Clock for local wake-up timers (the injected one, or the system clock). */
  timerClock: Clock;
  originId: string;
  events: GroupEvents;
  idle: IdleTracker;
  /** The configurations this process pushed, to re-create pools Redis lost. */
  pools: ReadonlyMap<string, StorePoolConfig>;
  /** How long a pool re-created after Redis lost it admits nobody new (see `restoring`). */
  restoreGraceMs: number;
  budgets: ReadonlyMap<string, number | null>;
  listener(): RedisListener;
  /** Told about every failure to reach Redis, with the hash tag of the group it was met on. */
  onUnavailable(error: StoreUnavailableError, tag: string | null): void;
  /**
   * A pool this process defined is missing, or a slot it holds is unknown, in the group `tag`:
   * whether its shard lost its data, in which case the group's recovery has run (see
   * `DataLossWatch.check`).
   */
  checkDataLoss(tag: string): Promise<boolean>;
  /**
   * Before this process's first definition in a group: reads the group's epoch (see
   * `DataLossWatch`); null when it is known already.
   */
  knowGroup(tag: string): Promise<void> | null;
}

/** Hops followed through forwarding records before giving up (moves chain rarely). */
const MAX_HOPS = 4;

/**
 * The Redis side of the store: each operation is one script on the pool's group (plus, on
 * first definition or a budget change, the home pointer). Keeps the process's route cache,
 * follows forwarding records left by pool moves, re-creates pools Redis lost, dispatches
 * the events a script reports and arms the local wake-up timers.
 *
 * @example
 * ```ts
 * const engine = new RedisEngine(deps);
 * await engine.upsertPool("llm", config);
 * const result = await engine.acquire("llm", { slotId, waitMs: 0 });
 * ```
 */
export class RedisEngine {
  private readonly routes = new Map<string, PoolRoute>();
  private readonly groups: GroupRunner;
  private closed = false;

  constructor(private readonly deps: EngineDeps) {
    this.groups = new GroupRunner(deps);
  }

  /** Redis time; `tag`: read on the node that holds that group (a cluster's masters may differ). */
  async now(tag: string | null = null): Promise<number> {
    if (this.deps.clock) return this.deps.clock.now();
    const [seconds, micros] = await this.groups.command((redis) => nodeFor(redis, tag).time(), tag);
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  async upsertBudget(budget: string, originMaxConcurrent: number | null): Promise<void> {
    const origin = originMaxConcurrent === null ? "" : String(originMaxConcurrent);
    await this.groups.run("upsert-budget", this.budgetRoute(budget), [origin]);
  }

  async removeBudget(budget: string): Promise<void> {
    await this.groups.run("upsert-budget", this.budgetRoute(budget), [""]);
  }

  /**
   * Defines or updates the pool in its group. The first time this process defines it (or
   * when its budget changes) the home pointer says where it lives now; a pool found in
   * another group is moved, which is refused with a ConflictError while it holds slots or
   * has waiters there. `restoring`: the pool may be one Redis lost (recovery after an
   * outage); if this call creates it, it admits nobody new for `restoreGraceMs`, time for
   * every process to adopt the slots it still holds before waiters are served. Answers
   * whether this call created the pool in its group (a move answers false).
   */
  async upsertPool(pool: string, config: StorePoolConfig, restoring = false): Promise<boolean> {
    const target = this.deps.keys.groupTag(pool, config.budget?.id ?? null);
    if (this.routes.get(pool)?.tag !== target) {
      const home = await this.claimHome(pool, target);
      if (home !== target) {
        await this.move(pool, home, target, config);
        return false;
      }
    }
    const route = this.route(pool, target);
    const knowing = this.knowGroup(target);
    if (knowing) await knowing;
    const grace = restoring ? this.deps.restoreGraceMs : 0;
    const reply = await this.groups.run(
      "upsert-pool",
      route,
      configArgs(config, target, null, grace),
    );
    const moved = resultType(reply) === "missing" ? movedTo(reply) : null;
    if (moved) {
      await this.move(pool, moved, target, config);
      return false;
    }
    this.routes.set(pool, route);
    return readCreated(reply);
  }

  async removePool(pool: string): Promise<void> {
    const route = this.routes.get(pool);
    if (!route) return;
    await this.poolOp(pool, "remove-pool", []);
    this.routes.delete(pool);
    // A budget's timer may still serve the other pools of the group.
    if (!isBudgetGroup(route)) this.groups.forget(route);
    await this.groups.command((redis) => redis.del(this.deps.keys.home(pool)), this.homeTag(pool));
  }

  async acquire(pool: string, request: StoreAcquireRequest): Promise<StoreAcquireResult> {
    const args = [request.slotId, String(request.waitMs)];
    const reply = await this.poolOp(pool, "acquire", args, true);
    if (!reply) throw new PoolNotFoundError(pool);
    return readAcquire(reply);
  }

  async release(pool: string, slotId: string): Promise<StoreReleaseResult> {
    const reply = await this.poolOp(pool, "release", [slotId]);
    return reply ? readRelease(reply) : NOT_RELEASED;
  }

  async inspect(pool: string, slotId: string): Promise<StoreInspectResult | null> {
    const reply = await this.poolOp(pool, "inspect", [slotId]);
    return reply ? readInspect(reply) : null;
  }

  async renew(pool: string, slotId: string): Promise<StoreRenewResult> {
    const result = await this.renewOnce(pool, slotId);
    // Unknown to Redis: if Redis lost its data, the recovery has adopted the slot back.
    const tag = this.routes.get(pool)?.tag;
    if (result.type !== "not_found" || !tag || !(await this.deps.checkDataLoss(tag))) return result;
    return this.renewOnce(pool, slotId);
  }

  private async renewOnce(pool: string, slotId: string): Promise<StoreRenewResult> {
    const reply = await this.poolOp(pool, "renew", [slotId]);
    return reply ? readRenew(reply) : NOT_FOUND;
  }

  async cancel(pool: string, slotId: string): Promise<StoreCancelResult> {
    const reply = await this.poolOp(pool, "cancel", [slotId]);
    return reply ? readCancel(reply) : UNKNOWN;
  }

  /**
   * Puts a waiter of this process back in the queue if another process dropped it while this
   * one was not listening (see `lua/rejoin.lua`); a slot it was handed meanwhile goes to the
   * listener now.
   */
  async rejoin(waiter: RejoiningWaiter): Promise<void> {
    const { pool, slotId, waitedMs, waitLeftMs } = waiter;
    const reply = await this.poolOp(pool, "rejoin", [slotId, String(waitedMs), String(waitLeftMs)]);
    const held = reply ? readRejoin(reply) : null;
    if (held && !this.closed) this.deps.listener().granted(pool, held.slot, held.queuedMs);
  }

  /**
   * Makes a slot this process holds, granted locally during an outage (failure policy "open")
   * or forgotten by a restarted Redis, a holder in Redis, counted against the shared limit
   * from now on (see `lua/adopt.lua`), its lease not past `leaseUntil` (Redis time; null: a
   * fresh term). Answers the slot as Redis holds it; null when the pool is not in Redis or
   * the lease had run out.
   */
  async adopt(
    pool: string,
    slotId: string,
    requestLeftMs: number,
    leaseUntil: number | null,
  ): Promise<HeldSlot | null> {
    const requestLeft = String(Math.max(1, Math.round(requestLeftMs)));
    const args = [slotId, requestLeft, optionalArg(leaseUntil)];
    const reply = await this.poolOp(pool, "adopt", args);
    return reply ? readAdopt(reply) : null;
  }

  /** `recreateIfLost` false: the recovery restores what it re-created (it must not wait on itself). */
  async setLearned(pool: string, learned: LearnedLimits, recreateIfLost = true): Promise<void> {
    const args = [...learnedArgs(learned), ...probeArgs(learned)];
    const reply = await this.poolOp(pool, "set-learned", args, recreateIfLost);
    if (!reply) throw new PoolNotFoundError(pool);
  }

  async snapshot(pool: string): Promise<PoolSnapshot | null> {
    const reply = await this.poolOp(pool, "snapshot", []);
    return reply ? readSnapshot(reply) : null;
  }

  /** Dispatches events another process's script published for this process's slots. */
  receive(events: ReplyFields): void {
    if (this.closed || !Array.isArray(events)) return;
    dispatchEvents(this.deps.listener(), events);
  }

  close(): void {
    this.closed = true;
    this.groups.close();
  }

  /**
   * Runs a pool script where the pool lives, following moves and re-creating a lost pool.
   * Null: the pool is not in Redis (or not known to this process).
   */
  private async poolOp(
    pool: string,
    script: GroupScriptName,
    args: readonly string[],
    recreateIfLost = false,
  ): Promise<ScriptResult | null> {
    let recreated = false;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const route = this.routes.get(pool);
      if (!route) return null;
      const reply = await this.groups.run(script, route, args);
      if (resultType(reply) !== "missing") return reply;
      const moved = movedTo(reply);
      if (moved) {
        this.routes.set(pool, this.route(pool, moved));
        continue;
      }
      const config = this.deps.pools.get(pool);
      if (!recreateIfLost || recreated || !config) return null;
      recreated = true;
      // Redis lost its data (a flush): the recovery re-created every pool with its grace.
      // Else another process removed the pool: define it again.
      if (!(await this.deps.checkDataLoss(route.tag))) await this.recreate(pool, config);
    }
    return null;
  }

  private async recreate(pool: string, config: StorePoolConfig): Promise<void> {
    const budget = config.budget?.id;
    const origin = budget === undefined ? undefined : this.deps.budgets.get(budget);
    if (budget !== undefined && origin !== undefined) await this.upsertBudget(budget, origin);
    // No pause here: a pool removed by another process comes back at once. After a restart,
    // recovery has re-created the pool with its pause before any acquire gets here.
    await this.upsertPool(pool, config);
  }

  /** Moves an idle pool from one group to another, carrying its learned limits and RPM log. */
  private async move(
    pool: string,
    from: string,
    to: string,
    config: StorePoolConfig,
    hops = 0,
  ): Promise<void> {
    const retired = readRetire(await this.groups.run("retire-pool", this.route(pool, from), [to]));
    if (retired.t === "busy") {
      throw new ConflictError(
        `Pool "${pool}" has ${retired.held} held slots and ${retired.queued} waiters in Redis; ` +
          "it can change budget only while idle. Retry when its slots are released.",
      );
    }
    if (retired.t === "absent" && retired.moved && retired.moved !== to && hops < MAX_HOPS) {
      return this.move(pool, retired.moved, to, config, hops + 1);
    }
    const route = this.route(pool, to);
    const knowing = this.knowGroup(to);
    if (knowing) await knowing;
    const carried = retired.t === "retired" ? retired : NOTHING_CARRIED;
    await this.groups.run("upsert-pool", route, configArgs(config, to, carried));
    await this.groups.command(
      (redis) => redis.set(this.deps.keys.home(pool), to),
      this.homeTag(pool),
    );
    this.routes.set(pool, route);
  }

  private claimHome(pool: string, target: string): Promise<string> {
    return this.groups.home(this.deps.keys.home(pool), this.homeTag(pool), target);
  }

  /**
   * Reads the group's epoch if this process does not know it yet; null when it does (then
   * nothing is awaited: a definition keeps its place among the group's calls).
   */
  private knowGroup(tag: string): Promise<void> | null {
    const knowing = this.deps.knowGroup(tag);
    return knowing && this.groups.guard(tag, () => knowing);
  }

  /** The hash tag of a pool's home pointer (its own group's, whatever its budget). */
  private homeTag(pool: string): string {
    return this.deps.keys.groupTag(pool, null);
  }

  /** The hash tag of the group a pool lives in, as this process last found it (null: unknown). */
  tagOf(pool: string): string | null {
    return this.routes.get(pool)?.tag ?? null;
  }

  private route(pool: string, tag: string): PoolRoute {
    const known = this.routes.get(pool);
    if (known?.tag === tag) return known;
    return { pool, enc: encodeName(pool), tag, base: this.deps.keys.groupBase(tag) };
  }

  private budgetRoute(budget: string): PoolRoute {
    const tag = this.deps.keys.budgetTag(budget);
    return { pool: "", enc: "", tag, base: this.deps.keys.groupBase(tag) };
  }
}
