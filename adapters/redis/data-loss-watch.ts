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
   * Puts back what the group (hash tag) lost: its pools re-created with their restore grace,
   * this process's slots there adopted and its waiters rejoined (`resyncAfterOutage`).
   */
  recover(tag: string): Promise<void>;
}

/** An announcement: the group and the epoch found after it lost its data. */
interface Announcement {
  tag: string;
  epoch: string;
}

/**
 * Notices that Redis lost a group's data while this process stayed connected (`FLUSHALL`,
 * `FLUSHDB` on one master of a cluster, keys deleted by hand), which no dropped connection
 * announces.
 *
 * Each group holds an *epoch* (`B:epoch`, in the group's slot, so on the shard that holds
 * the group), a random value written by the first process that finds none. Each process
 * remembers the one it read for every group it defined pools in. When a process finds a pool
 * it defined missing, or a slot it holds unknown, it reads that group's epoch again: the same
 * value means another process removed that pool or the lease ran out, and nothing else is
 * wrong. A different or missing value means the group's shard lost its data: the process runs
 * the recovery a restart gets for that group (its pools back with their restore grace, its
 * slots adopted, its waiters rejoined) and announces the new epoch, so every other process
 * adopts its own slots there within the grace, before anyone is admitted on top of them.
 * Groups on other shards are untouched; other groups of the flushed shard are found the same
 * way, each at its first missing pool or slot.
 *
 * @example
 * ```ts
 * const watch = new DataLossWatch({ runner, subscriber, keys, idle, recover: (tag) => resync(tag) });
 * await watch.listen();
 * await watch.know("{p:llm}");
 * if (await watch.check("{p:llm}")) retryTheOperation();
 * ```
 */
export class DataLossWatch {
  /** The epoch this process last read or heard, per group tag. */
  private readonly epochs = new Map<string, string>();
  private readonly recovering = new Map<string, Promise<void>>();
  private readonly checking = new Map<string, Promise<boolean>>();

  constructor(private readonly deps: DataLossWatchDeps) {}

  /** Listens for announcements (at start). */
  async listen(): Promise<void> {
    await this.deps.subscriber.subscribe(this.channel);
  }

  /**
   * Reads the group's epoch (writing one if it has none) unless this process knows it; null
   * when it does (nothing to wait for, so a definition keeps its place among the calls).
   */
  know(tag: string): Promise<void> | null {
    if (this.epochs.has(tag)) return null;
    return this.readOrWrite(tag).then((epoch) => {
      if (!this.epochs.has(tag)) this.epochs.set(tag, epoch);
    });
  }

  /**
   * Reads again the epoch of every known group `covers` accepts, as this process's reference:
   * on a shard's recovery after an outage (a restarted master is empty: the first process back
   * writes the epoch, the others read it).
   */
  async establish(covers: (tag: string) => boolean): Promise<void> {
    const tags = [...this.epochs.keys()].filter(covers);
    const epochs = await Promise.all(tags.map((tag) => this.readOrWrite(tag)));
    for (const [i, tag] of tags.entries()) this.epochs.set(tag, epochs[i]!);
  }

  /**
   * Something this process put in the group is gone. Answers true when the group lost its
   * data: its recovery has then run (or the one already running has finished), and the
   * operation may be tried again. Answers false when the epoch did not change.
   */
  check(tag: string): Promise<boolean> {
    const recovering = this.recovering.get(tag);
    if (recovering) return recovering.then(() => true);
    // Calls that find something missing at once share one look: a second look would read the
    // epoch the first one just wrote and take the loss for a removal.
    let checking = this.checking.get(tag);
    if (!checking) {
      checking = this.compare(tag).finally(() => this.checking.delete(tag));
      this.checking.set(tag, checking);
    }
    return checking;
  }

  private async compare(tag: string): Promise<boolean> {
    const current = await this.readOrWrite(tag);
    // Another process's announcement arrived meanwhile and started the recovery.
    const recovering = this.recovering.get(tag);
    if (recovering) {
      await recovering;
      return true;
    }
    const known = this.epochs.get(tag);
    this.epochs.set(tag, current);
    if (known === undefined || current === known) return false;
    this.announce({ tag, epoch: current });
    await this.recover(tag);
    return true;
  }

  /** Another process announced the epoch it found after a group lost its data. */
  heard(message: string): void {
    const announced = parseAnnouncement(message);
    if (!announced) return;
    const known = this.epochs.get(announced.tag);
    if (known === undefined || announced.epoch === known) return;
    this.epochs.set(announced.tag, announced.epoch);
    this.deps.idle.track(this.recover(announced.tag).catch(() => {}));
  }

  /** The channel on which epochs are announced (plain Pub/Sub: every process listens). */
  get channel(): string {
    return this.deps.keys.epoch();
  }

  /** One round trip: `SET NX GET` answers the value already there, or writes ours. */
  private async readOrWrite(tag: string): Promise<string> {
    const candidate = randomUUID();
    const key = this.deps.keys.groupEpoch(tag);
    const previous = await this.deps.runner.command((redis) =>
      redis.set(key, candidate, "NX", "GET"),
    );
    return previous ?? candidate;
  }

  private announce(announcement: Announcement): void {
    const message = JSON.stringify(announcement);
    const published = this.deps.runner.command((redis) => redis.publish(this.channel, message));
    // Unheard, the others still find out at their next missing pool or slot.
    this.deps.idle.track(published.catch(() => {}));
  }

  /** One recovery per group at a time; callers that find the loss meanwhile wait for it. */
  private recover(tag: string): Promise<void> {
    let recovering = this.recovering.get(tag);
    if (!recovering) {
      recovering = this.deps.recover(tag).finally(() => this.recovering.delete(tag));
      this.recovering.set(tag, recovering);
    }
    return recovering;
  }
}

function parseAnnouncement(message: string): Announcement | null {
  try {
    const parsed = JSON.parse(message) as Partial<Announcement>;
    if (typeof parsed.tag !== "string" || typeof parsed.epoch !== "string") return null;
    return { tag: parsed.tag, epoch: parsed.epoch };
  } catch {
    return null;
  }
}
