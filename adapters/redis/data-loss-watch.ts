import { randomUUID } from "node:crypto";
import type { RedisClient } from "./cluster.js";
import type { IdleTracker } from "./idle-tracker.js";
import type { RedisKeys } from "./keys.js";
import type { ScriptRunner } from "./script-runner.js";

/** What a {@link DataLossWatch} works with. */
export interface DataLossWatchDeps {
  runner: ScriptRunner;
  /** The store's subscriber connection (announcements arrive there, see `connection-watch.ts`). */
  subscriber: RedisClient;
  keys: RedisKeys;
  idle: IdleTracker;
  /**
   * Puts back what Redis lost: every pool re-created with its restore grace, this process's
   * slots adopted and its waiters rejoined (`resyncAfterOutage`).
   */
  recover(): Promise<void>;
}

/**
 * Notices that Redis lost its data while this process stayed connected (`FLUSHALL`,
 * `FLUSHDB`, keys deleted by hand), which no dropped connection announces.
 *
 * Redis holds an *epoch*, a random value written by the first process that finds none. Each
 * process remembers the one it read. When a process finds a pool it defined missing, or a slot
 * it holds unknown, it reads the epoch again: the same value means another process removed
 * that pool or the lease ran out, and nothing else is wrong. A different or missing value
 * means Redis lost its data: the process runs the recovery a restart gets (every pool back
 * with its restore grace, its slots adopted, its waiters rejoined) and announces the new
 * epoch, so every other process adopts its own slots within the grace, before anyone is
 * admitted on top of them.
 *
 * @example
 * ```ts
 * const watch = new DataLossWatch({ runner, subscriber, keys, idle, recover: () => resync() });
 * await watch.establish();
 * if (await watch.check()) retryTheOperation();
 * ```
 */
export class DataLossWatch {
  /** The epoch this process last read or heard (null: none read yet). */
  private epoch: string | null = null;
  private recovering: Promise<void> | null = null;
  private checking: Promise<boolean> | null = null;

  constructor(private readonly deps: DataLossWatchDeps) {}

  /**
   * Listens for announcements, then reads the epoch (writing one if Redis has none) as this
   * process's reference. At start, and on every recovery (a restarted Redis is empty: the
   * first process back writes the epoch, the others read it).
   */
  async establish(): Promise<void> {
    await this.deps.subscriber.subscribe(this.channel);
    this.epoch = await this.readOrWrite();
  }

  /**
   * Something this process put in Redis is gone. Answers true when Redis lost its data:
   * the recovery has then run (or the one already running has finished), and the operation
   * may be tried again. Answers false when the epoch did not change.
   */
  check(): Promise<boolean> {
    if (this.recovering) return this.recovering.then(() => true);
    // Calls that find something missing at once share one look: a second look would read the
    // epoch the first one just wrote and take the loss for a removal.
    this.checking ??= this.compare().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async compare(): Promise<boolean> {
    const current = await this.readOrWrite();
    // Another process's announcement arrived meanwhile and started the recovery.
    if (this.recovering) {
      await this.recovering;
      return true;
    }
    if (this.epoch === null || current === this.epoch) {
      this.epoch = current;
      return false;
    }
    this.epoch = current;
    this.announce(current);
    await this.recover();
    return true;
  }

  /** Another process announced the epoch it found after Redis lost its data. */
  heard(epoch: string): void {
    if (this.epoch === null || epoch === this.epoch) return;
    this.epoch = epoch;
    this.deps.idle.track(this.recover().catch(() => {}));
  }

  /** The channel on which epochs are announced (plain Pub/Sub: every process listens). */
  get channel(): string {
    return this.deps.keys.epoch();
  }

  /** One round trip: `SET NX GET` answers the value already there, or writes ours. */
  private async readOrWrite(): Promise<string> {
    const candidate = randomUUID();
    const key = this.deps.keys.epoch();
    const previous = await this.deps.runner.command((redis) =>
      redis.set(key, candidate, "NX", "GET"),
    );
    return previous ?? candidate;
  }

  private announce(epoch: string): void {
    const published = this.deps.runner.command((redis) => redis.publish(this.channel, epoch));
    // Unheard, the others still find out at their next missing pool or slot.
    this.deps.idle.track(published.catch(() => {}));
  }

  /** One recovery at a time; callers that find the loss meanwhile wait for it. */
  private recover(): Promise<void> {
    if (!this.recovering) {
      this.recovering = this.deps.recover().finally(() => {
        this.recovering = null;
      });
    }
    return this.recovering;
  }
}
