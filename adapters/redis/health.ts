import type { Clock, TimerHandle } from "../../src/clock/clock.js";
import { systemClock } from "../../src/clock/clock.js";

/**
 * How the store stands: `ok` (Redis answers), `degraded` (Redis unreachable, failure policy
 * "open": this process admits on its own, local limits only), `unavailable` (Redis
 * unreachable, policy "closed": operations throw `StoreUnavailableError`).
 */
export type StoreState = "ok" | "degraded" | "unavailable";

/** The store's status, as `health()` answers and `onStatus` listeners receive it. */
export interface StoreHealth {
  /** How the store stands now (see {@link StoreState}). */
  state: StoreState;
  /** Epoch ms (local clock) of the last change. */
  since: number;
  /** Why Redis is considered unreachable; null when ok. */
  reason: string | null;
  /**
   * True while only some masters of a Redis Cluster are down: the groups on the others are
   * served as usual (exact shared limits), only the down ones' follow the failure policy.
   */
  partial?: boolean;
}

/** Tuning and hooks of {@link ConnectionHealth}. */
export interface HealthOptions {
  /** The state reported while Redis is unreachable. */
  downState: "degraded" | "unavailable";
  /** A write to Redis; resolves when Redis accepts commands again. */
  probe(): Promise<void>;
  /** Work to finish before reporting ok again (reload scripts, push definitions). */
  recover(): Promise<void>;
  /** First delay between probes; doubles up to `probeMaxMs`. */
  probeMinMs: number;
  probeMaxMs: number;
  /** Real time: reachability is about the network, not the injected clock. */
  clock?: Clock;
}

/**
 * Tracks whether Redis is reachable. Any failed call marks it down at once (so later calls
 * fail or fall back without waiting), then a probe with exponential backoff, or a
 * reconnect of the client, brings it back after the recovery work succeeds. The probe is
 * the only repeated work and runs only while Redis is down.
 *
 * @example
 * ```ts
 * const health = new ConnectionHealth({ downState: "unavailable", probe, recover, probeMinMs: 100, probeMaxMs: 2000 });
 * health.onChange((status) => console.log(status.state));
 * ```
 */
export class ConnectionHealth {
  private status: StoreHealth;
  private readonly listeners = new Set<(status: StoreHealth) => void>();
  private readonly clock: Clock;
  private timer: TimerHandle | null = null;
  private probing = false;
  private delayMs: number;
  private closed = false;

  constructor(private readonly options: HealthOptions) {
    this.clock = options.clock ?? systemClock;
    this.delayMs = options.probeMinMs;
    this.status = { state: "ok", since: this.clock.now(), reason: null };
  }

  get up(): boolean {
    return this.status.state === "ok";
  }

  current(): StoreHealth {
    return { ...this.status };
  }

  onChange(listener: (status: StoreHealth) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Redis failed to answer: report it and start probing. */
  markDown(error: unknown): void {
    if (this.closed) return;
    if (this.up) {
      const reason = error instanceof Error ? error.message : String(error);
      this.change({ state: this.options.downState, since: this.clock.now(), reason });
      this.delayMs = this.options.probeMinMs;
    }
    if (!this.probing && this.timer === null) this.schedule();
  }

  /** The client reconnected: probe now instead of at the next backoff step. */
  nudge(): void {
    if (this.closed || this.up || this.probing) return;
    this.cancelTimer();
    void this.probe();
  }

  close(): void {
    this.closed = true;
    this.cancelTimer();
    this.listeners.clear();
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.probe();
    }, this.delayMs);
    this.delayMs = Math.min(this.delayMs * 2, this.options.probeMaxMs);
  }

  private async probe(): Promise<void> {
    this.probing = true;
    try {
      await this.options.probe();
      await this.options.recover();
      if (this.closed) return;
      this.change({ state: "ok", since: this.clock.now(), reason: null });
    } catch {
      if (!this.closed && !this.up) this.schedule();
    } finally {
      this.probing = false;
    }
  }

  private change(status: StoreHealth): void {
    this.status = status;
    for (const listener of this.listeners) listener({ ...status });
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
