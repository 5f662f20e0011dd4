import type { Clock } from "../../src/clock/clock.js";
import { StoreUnavailableError } from "../../src/errors.js";
import type { RedisClient } from "./cluster.js";
import { toStoreError } from "./connection.js";
import { GroupBatcher } from "./group-batcher.js";
import type { IdleTracker } from "./idle-tracker.js";
import {
  dispatchEvents,
  REPLY_EVENT_COUNT,
  REPLY_EVENTS,
  REPLY_NOW,
  REPLY_WAKE,
  type RedisListener,
  type ReplyFields,
  type ScriptResult,
} from "./replies.js";
import type { ScriptRunner } from "./script-runner.js";
import type { GroupScriptName } from "./scripts.js";
import { WakeTimers } from "./wake-timers.js";

/** Where one pool's keys live: its group (tag and base key) and its encoded name. */
export interface PoolRoute {
  readonly pool: string;
  readonly enc: string;
  readonly tag: string;
  readonly base: string;
}

/** True for a budget's group (several pools), false for a pool's own group. */
export function isBudgetGroup(route: PoolRoute): boolean {
  return route.tag.startsWith("{b:");
}

/** A process's subscriptions to the groups' event channels (sharded Pub/Sub). */
export interface GroupEvents {
  /** Resolves once the subscription to the group's channel is in place; may be called again. */
  listen(tag: string): Promise<void>;
  unlisten(tag: string): void;
}

/** What {@link GroupRunner} needs from the store around it. */
export interface GroupRunnerDeps {
  runner: ScriptRunner;
  /** Injected clock: scripts get its `now`. Null: scripts read the server's TIME. */
  clock: Clock | null;
  /** Clock for local wake-up timers (the injected one, or the system clock). */
  timerClock: Clock;
  /** This process's id: recorded as the owner of its slots and waiters. */
  originId: string;
  /**
   * Subscribes this process to a group's event channel (resolves once Redis confirmed it);
   * `unlisten` ends that. See {@link GroupEvents}.
   */
  events: GroupEvents;
  idle: IdleTracker;
  listener(): RedisListener;
  /**
   * Told about every failure to reach Redis (already wrapped in StoreUnavailableError), with
   * the hash tag of the group (or key) it was met on; null: a keyless command.
   */
  onUnavailable(error: StoreUnavailableError, tag: string | null): void;
}

/**
 * Runs group scripts and does what every reply asks: hands the caller's events to the
 * listener and arms the group's local wake-up timer, which runs the `serve` script at the
 * earliest lease deadline or gate opening the reply named. Redis failures come out as
 * `StoreUnavailableError`.
 *
 * @example
 * ```ts
 * const groups = new GroupRunner(deps);
 * const result = readAcquire(await groups.run("acquire", route, [slotId, "0"]));
 * ```
 */
export class GroupRunner {
  private readonly wake: WakeTimers<PoolRoute>;
  /** Tags of the groups whose event channel this process listens to. */
  private readonly listening = new Set<string>();
  private lastNow = 0;
  private closed = false;

  private readonly batcher: GroupBatcher;

  constructor(private readonly deps: GroupRunnerDeps) {
    this.wake = new WakeTimers(deps.timerClock, (route, at) => this.serveAt(route, at));
    this.batcher = new GroupBatcher({
      runner: deps.runner,
      originId: deps.originId,
      onReply: (route, fields) => this.afterReply(route, fields),
      onError: (error, route) => this.unavailable(error, route.tag),
    });
  }

  /**
   * Runs `script` on the route's group; `at` runs it at that instant (a due wake-up). Calls
   * of one group reach Redis in the order they were made; acquire, release, renew and cancel
   * calls that wait for their turn share one script call (see {@link GroupBatcher}).
   */
  run(
    script: GroupScriptName,
    route: PoolRoute,
    args: readonly string[],
    at?: number,
  ): Promise<ScriptResult> {
    // Before this process's first call in a group it listens to the group's events: other
    // processes hand its waiters slots only while it does (see `listening` in lib.lua).
    if (!this.listening.has(route.tag)) return this.listenThenRun(script, route, args, at);
    return this.batcher.submit(script, route, args, this.scriptNow(at));
  }

  private async listenThenRun(
    script: GroupScriptName,
    route: PoolRoute,
    args: readonly string[],
    at: number | undefined,
  ): Promise<ScriptResult> {
    try {
      await this.deps.events.listen(route.tag);
    } catch (error) {
      throw this.unavailable(error, route.tag);
    }
    this.listening.add(route.tag);
    return this.batcher.submit(script, route, args, this.scriptNow(at));
  }

  /** Hands a reply's events to the listener and arms the wake-up; answers where its result starts. */
  private afterReply(route: PoolRoute, fields: ReplyFields): number {
    const events = fields[REPLY_EVENT_COUNT] as number;
    if (!this.closed) {
      if (events > 0) {
        dispatchEvents(this.deps.listener(), fields, REPLY_EVENTS, REPLY_EVENTS + events);
      }
      const wake = fields[REPLY_WAKE];
      if (typeof wake === "number") this.armWake(route, wake, fields[REPLY_NOW] as number);
    }
    return REPLY_EVENTS + events;
  }

  /** The group a pool lives in, claiming `target` when none is recorded (`homeTag`: its key's tag). */
  async home(homeKey: string, homeTag: string, target: string): Promise<string> {
    const { runner } = this.deps;
    return this.guard(homeTag, async () =>
      String(await runner.run(runner.scripts.home, homeKey, [target])),
    );
  }

  /** A plain command, with the same failure mapping; `tag`: the hash tag of its key, if any. */
  command<T>(send: (redis: RedisClient) => Promise<T>, tag: string | null = null): Promise<T> {
    return this.guard(tag, () => this.deps.runner.command(send));
  }

  /** Runs other work on Redis with the same failure mapping, met on the group `tag`. */
  async guard<T>(tag: string | null, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.unavailable(error, tag);
    }
  }

  /** Forgets the wake-up and the event subscription of a group nobody uses any more. */
  forget(route: PoolRoute): void {
    this.wake.cancel(route.base);
    this.listening.delete(route.tag);
    this.deps.events.unlisten(route.tag);
  }

  close(): void {
    this.closed = true;
    this.wake.clear();
  }

  /**
   * The `now` argument: empty in TIME mode; else the injected clock, never behind a time
   * already sent (a due wake-up caught up after a ManualClock advance runs at its own,
   * earlier instant).
   */
  private scriptNow(at: number | undefined): string {
    const { clock } = this.deps;
    if (!clock) return "";
    const now = Math.max(at ?? clock.now(), this.lastNow);
    this.lastNow = now;
    return String(now);
  }

  private armWake(route: PoolRoute, at: number, scriptNow: number): void {
    const { clock } = this.deps;
    const delay = clock ? at - clock.now() : at - scriptNow;
    this.wake.arm(route.base, route, at, delay);
  }

  private serveAt(route: PoolRoute, at: number): void {
    if (this.closed) return;
    const args = [isBudgetGroup(route) ? "1" : ""];
    const work = this.run("serve", route, args, at).catch(() => {
      // Reported through onUnavailable; the next operation or the recovery serves the group.
    });
    this.deps.idle.track(work);
  }

  private unavailable(error: unknown, tag: string | null): unknown {
    const wrapped = toStoreError(error);
    if (wrapped instanceof StoreUnavailableError) this.deps.onUnavailable(wrapped, tag);
    return wrapped;
  }
}
