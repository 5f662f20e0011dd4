import type { Clock } from "../../src/index.js";

/** What the simulated upstream allows; the callers do not know any of it. */
export interface UpstreamLimits {
  /** Requests it serves at once; one more is answered 429. */
  concurrency: number;
  /** Requests per minute, as a token bucket holding a minute's worth that refills evenly. */
  rpm: number;
  /** Mean service time of a successful call. */
  meanServiceMs: number;
  /** Service times are uniform in mean ± spread. */
  serviceSpreadMs: number;
  /** A 429 is answered after this long (throttling is cheap for the upstream). */
  throttleLatencyMs: number;
  /**
   * "milliseconds": 429s carry `retry-after-ms` besides `retry-after` (as OpenAI's and Azure's
   * do); "seconds": only `retry-after`, in whole seconds, rounded up (most APIs).
   */
  retryHints: "milliseconds" | "seconds";
  /** The concurrency changes to `concurrency` this long after the upstream starts. */
  change?: { afterMs: number; concurrency: number };
  /**
   * "bucket" (default): the RPM is a token bucket holding a minute's worth. "window": a
   * fixed quota of `rpm` calls per clock minute (reset on the minute, as many APIs count),
   * reported with `x-ratelimit-reset-requests` = time to the next minute.
   */
  quota?: "bucket" | "window";
}

/** One answer: an HTTP status and the headers a real API would send. */
export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string>;
}

/** Everything the upstream answered, by kind. */
export interface UpstreamTally {
  ok: number;
  /** 429s because too many calls were in flight. */
  throttledConcurrency: number;
  /** 429s because the request bucket was empty. */
  throttledRate: number;
  /** Most calls it ever served at once. */
  peakConcurrency: number;
  /** When the first 429 after the concurrency change was answered, or null. */
  firstThrottleAfterChange: number | null;
}

const MINUTE_MS = 60_000;

/**
 * An API with a hidden concurrency limit and a hidden RPM that answers 429 beyond either,
 * with the headers OpenAI sends: `x-ratelimit-{limit,remaining,reset}-requests` on every
 * answer (the reset is the time until the bucket is full again, as a Go duration), plus
 * `retry-after` (whole seconds) and, with precise hints, `retry-after-ms` on 429s. For a
 * concurrency 429 the hint is the time until a call in flight finishes; for an empty
 * bucket, until the next token.
 *
 * @example
 * ```ts
 * const upstream = new SimulatedUpstream(clock, limits, seededRandom(1));
 * const { status, headers } = await upstream.call();
 * ```
 */
export class SimulatedUpstream {
  readonly tally: UpstreamTally = {
    ok: 0,
    throttledConcurrency: 0,
    throttledRate: 0,
    peakConcurrency: 0,
    firstThrottleAfterChange: null,
  };
  /** When each call in flight will finish (at most `concurrency` entries). */
  private readonly finishTimes: number[] = [];
  private tokens: number;
  private refilledAt: number;
  /** Start of the current quota window ("window" quota). */
  private windowStart: number;
  readonly startedAt: number;

  constructor(
    private readonly clock: Clock,
    readonly limits: UpstreamLimits,
    private readonly random: () => number,
  ) {
    this.tokens = limits.rpm;
    this.startedAt = clock.now();
    this.refilledAt = this.startedAt;
    this.windowStart = this.startedAt - (this.startedAt % MINUTE_MS);
  }

  /** Epoch ms of the concurrency change, or null when the limit never changes. */
  get changeAt(): number | null {
    const { change } = this.limits;
    return change ? this.startedAt + change.afterMs : null;
  }

  /** The concurrency it serves now (what an oracle knows). */
  concurrencyNow(): number {
    const changeAt = this.changeAt;
    const { change } = this.limits;
    return change && changeAt !== null && this.clock.now() >= changeAt
      ? change.concurrency
      : this.limits.concurrency;
  }

  /** Calls left in the quota now ("window" quota; the bucket's whole tokens otherwise). */
  quotaLeft(): number {
    this.refill(this.clock.now());
    return Math.floor(this.tokens);
  }

  /** ms until the quota next grows: the next minute ("window"), the next token ("bucket"). */
  msUntilQuota(): number {
    return this.isWindow() ? this.msToWindowEnd(this.clock.now()) : this.msUntilToken();
  }

  /** Sends one request; resolves with the answer when it arrives. */
  call(): Promise<UpstreamAnswer> {
    const now = this.clock.now();
    this.refill(now);
    if (this.tokens < 1) return this.throttle(this.msUntilQuota(), "rate");
    if (this.finishTimes.length >= this.concurrencyNow())
      return this.throttle(this.msUntilFree(now), "concurrency");
    return this.serve(now);
  }

  private serve(now: number): Promise<UpstreamAnswer> {
    this.tokens -= 1;
    const finishTimes = this.finishTimes;
    const { meanServiceMs, serviceSpreadMs } = this.limits;
    const serviceMs = Math.max(
      1,
      Math.round(meanServiceMs + serviceSpreadMs * (2 * this.random() - 1)),
    );
    const finishAt = now + serviceMs;
    finishTimes.push(finishAt);
    if (finishTimes.length > this.tally.peakConcurrency) {
      this.tally.peakConcurrency = finishTimes.length;
    }
    return new Promise((resolve) => {
      this.clock.setTimeout(() => {
        finishTimes.splice(finishTimes.indexOf(finishAt), 1);
        this.tally.ok++;
        this.refill(this.clock.now());
        resolve({ status: 200, headers: this.rateHeaders() });
      }, serviceMs);
    });
  }

  private throttle(hintMs: number, cause: "rate" | "concurrency"): Promise<UpstreamAnswer> {
    if (cause === "rate") this.tally.throttledRate++;
    else this.tally.throttledConcurrency++;
    const changeAt = this.changeAt;
    if (changeAt !== null && this.tally.firstThrottleAfterChange === null) {
      const answeredAt = this.clock.now() + this.limits.throttleLatencyMs;
      if (answeredAt >= changeAt) this.tally.firstThrottleAfterChange = answeredAt;
    }
    // The hint counts from when the answer arrives.
    const retryAfterMs = Math.max(0, Math.ceil(hintMs - this.limits.throttleLatencyMs));
    const headers = this.rateHeaders();
    headers["retry-after"] = String(Math.ceil(retryAfterMs / 1000));
    if (this.limits.retryHints === "milliseconds") headers["retry-after-ms"] = String(retryAfterMs);
    return new Promise((resolve) => {
      this.clock.setTimeout(() => resolve({ status: 429, headers }), this.limits.throttleLatencyMs);
    });
  }

  private rateHeaders(): Record<string, string> {
    const { rpm } = this.limits;
    const resetMs = this.isWindow()
      ? this.msToWindowEnd(this.clock.now())
      : ((rpm - this.tokens) * MINUTE_MS) / rpm;
    return {
      "x-ratelimit-limit-requests": String(rpm),
      "x-ratelimit-remaining-requests": String(Math.floor(this.tokens)),
      "x-ratelimit-reset-requests": goDuration(resetMs),
    };
  }

  private refill(now: number): void {
    const { rpm } = this.limits;
    if (this.isWindow()) {
      if (now - this.windowStart >= MINUTE_MS) {
        this.windowStart = now - (now % MINUTE_MS);
        this.tokens = rpm;
      }
      return;
    }
    this.tokens = Math.min(rpm, this.tokens + ((now - this.refilledAt) * rpm) / MINUTE_MS);
    this.refilledAt = now;
  }

  private isWindow(): boolean {
    return this.limits.quota === "window";
  }

  private msToWindowEnd(now: number): number {
    return this.windowStart + MINUTE_MS - now;
  }

  private msUntilToken(): number {
    return ((1 - this.tokens) * MINUTE_MS) / this.limits.rpm;
  }

  private msUntilFree(now: number): number {
    return Math.max(0, Math.min(...this.finishTimes) - now);
  }
}

/** A duration the way OpenAI writes resets: "12ms", "1.5s", "6m0s". */
function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  if (ms < MINUTE_MS) return `${Number((ms / 1000).toFixed(3))}s`;
  const minutes = Math.floor(ms / MINUTE_MS);
  return `${minutes}m${Number(((ms - minutes * MINUTE_MS) / 1000).toFixed(3))}s`;
}
