import { type Clock, systemClock, type TimerHandle } from "../clock/clock.js";
import { oldestKept, resolveAccessLogQuery, sinceCreation } from "./query.js";
import type {
  AccessLog,
  AccessLogEntry,
  AccessLogQuery,
  AccessLogRetention,
  AccessLogStore,
} from "./types.js";

/** Options of {@link BufferedAccessLog}. */
export interface BufferedAccessLogOptions {
  store: AccessLogStore;
  clock?: Clock;
  /** How long an entry may wait in the buffer before a batch write (ms); default 1 000. */
  flushIntervalMs?: number;
  /** A buffer this long is written on the next tick instead of waiting; default 500. */
  batchSize?: number;
  /**
   * The most entries one store write takes; a longer batch is written in parts, one per
   * event-loop turn, so requests are served between them. Default 64 (two multi-row INSERTs
   * of the SQLite store).
   */
  writeChunkSize?: number;
  /** Entries kept while the store refuses writes; beyond it the oldest are dropped. Default 50 000. */
  maxBuffered?: number;
  /** Called when a batch write fails (the entries stay buffered for the next try). */
  onError?: (error: unknown) => void;
  /**
   * When the pool now named `pool` was created (epoch ms), or undefined when there is none.
   * Reads never reach further back, so an earlier pool's entries under the same subdomain
   * stay hidden even if deleting them failed (e.g. a crash before {@link AccessLog.forgetPool}).
   * Default: every pool exists since the beginning of time.
   */
  poolCreatedAt?: (pool: string) => number | undefined | Promise<number | undefined>;
}

/**
 * An {@link AccessLog} that keeps writes off the request path: `append` only pushes to a
 * buffer; a timer (armed when the buffer goes from empty to not empty, so an idle log costs
 * nothing) writes batches to the store. `close` writes what is left.
 *
 * @example
 * ```ts
 * const accessLog = new BufferedAccessLog({ store: new SqliteAccessLogStore(db), clock: systemClock });
 * accessLog.append({ at: Date.now(), pool: "llm", keyId: 3, outcome: "admitted", reason: null,
 *   queuedMs: 0, remoteAddress: "127.0.0.1", source: "proxy", upstreamStatus: 200 });
 * await accessLog.list("llm", { limit: 10 });
 * ```
 */
export class BufferedAccessLog implements AccessLog {
  private readonly store: AccessLogStore;
  private readonly clock: Clock;
  private readonly flushIntervalMs: number;
  private readonly batchSize: number;
  private readonly writeChunkSize: number;
  private readonly maxBuffered: number;
  private readonly onError: (error: unknown) => void;
  private readonly poolCreatedAt: BufferedAccessLogOptions["poolCreatedAt"] & {};
  private buffer: AccessLogEntry[] = [];
  private timer: TimerHandle | null = null;
  private timerDelay = 0;
  private closed = false;
  private droppedCount = 0;
  /** The batch write under way, if any: flushes run one after another, never together. */
  private writing: Promise<void> | null = null;

  constructor(options: BufferedAccessLogOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.flushIntervalMs = options.flushIntervalMs ?? 1_000;
    this.batchSize = options.batchSize ?? 500;
    this.writeChunkSize = Math.max(1, options.writeChunkSize ?? 64);
    this.maxBuffered = options.maxBuffered ?? 50_000;
    this.onError = options.onError ?? (() => {});
    this.poolCreatedAt = options.poolCreatedAt ?? (() => Number.NEGATIVE_INFINITY);
  }

  /** Entries dropped so far (buffer overflow while the store failed, or appends after close). */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Entries waiting for the next batch write. */
  get pending(): number {
    return this.buffer.length;
  }

  append(entry: AccessLogEntry): void {
    if (this.closed) {
      this.droppedCount++;
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length > this.maxBuffered) {
      this.buffer.shift();
      this.droppedCount++;
    }
    if (this.buffer.length >= this.batchSize) this.schedule(0);
    else this.schedule(this.flushIntervalMs);
  }

  async list(pool: string, query?: AccessLogQuery): Promise<AccessLogEntry[]> {
    const resolved = resolveAccessLogQuery(query);
    const createdAt = await this.poolCreatedAt(pool);
    if (createdAt === undefined) return [];
    await this.flush();
    return this.store.list(pool, sinceCreation(resolved, createdAt));
  }

  async prune(retention: Iterable<AccessLogRetention>, now: number): Promise<number> {
    await this.flush();
    let pruned = 0;
    for (const poolRetention of retention) {
      pruned += await this.store.pruneBefore(poolRetention.pool, oldestKept(poolRetention, now));
    }
    return pruned;
  }

  async forgetPool(pool: string): Promise<number> {
    // A batch being written may hold the pool's entries: the delete must come after it.
    await this.writing;
    // Buffered entries go first: a failing delete must not leave them to be written later.
    const kept = this.buffer.filter((entry) => entry.pool !== pool);
    const dropped = this.buffer.length - kept.length;
    this.buffer = kept;
    return dropped + (await this.store.deletePool(pool));
  }

  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    this.cancelTimer();
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.writing = this.write(batch).finally(() => {
      this.writing = null;
    });
    await this.writing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    this.cancelTimer();
    this.droppedCount += this.buffer.length;
    this.buffer = [];
  }

  private async write(batch: AccessLogEntry[]): Promise<void> {
    // A 500-entry insert blocks the event loop for 1–2 ms, every request waiting behind it.
    for (let at = 0; at < batch.length; at += this.writeChunkSize) {
      if (at > 0) await nextTurn();
      try {
        await this.store.insert(
          at === 0 && batch.length <= this.writeChunkSize
            ? batch
            : batch.slice(at, at + this.writeChunkSize),
        );
      } catch (error) {
        // Keep the unwritten part (ahead of newer entries) and try again later.
        this.buffer = batch.slice(at).concat(this.buffer);
        if (!this.closed) this.schedule(this.flushIntervalMs);
        this.onError(error);
        return;
      }
    }
  }

  private schedule(delayMs: number): void {
    // An armed timer that fires sooner (or as soon) already covers this entry.
    if (this.timer !== null && this.timerDelay <= delayMs) return;
    this.cancelTimer();
    this.timerDelay = delayMs;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      // write() reports its own failures to onError.
      void this.flush();
    }, delayMs);
  }

  private cancelTimer(): void {
    if (this.timer === null) return;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Resolves after the I/O and timers already due have run. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
