import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import {
  initialLearnerState,
  type LearnContext,
  type LearnerState,
  learn,
} from "../../src/learning/learner.js";
import { learnerStatus } from "../../src/learning/learner-status.js";
import {
  NO_BACKOFF,
  PROBE_FACTOR,
  PROBE_SUCCESS_CAP,
  PROBE_WAIT_BASE_MS,
  PROBE_WAIT_CAP_MS,
  probeWaitMs,
  QUIET_RESET_MS,
  successesToProbe,
} from "../../src/learning/probe-backoff.js";
import type { ParsedOutcome, RateInfo } from "../../src/learning/types.js";

const MAX = 32;
const SUCCESS: ParsedOutcome = { status: 200, throttled: false, retryAfterMs: null, rate: null };
const CONCURRENCY_429: ParsedOutcome = {
  status: 429,
  throttled: true,
  retryAfterMs: 150,
  rate: { limit: 6000, remaining: 5000, windowMs: 60_000 },
};

/** A pool learning on a ManualClock: every call is busy and granted at the current limit. */
class Pool {
  readonly clock = new ManualClock(0);
  state: LearnerState;

  constructor(limit: number) {
    this.state = { ...initialLearnerState(), limit };
  }

  get limit(): number | null {
    return this.state.limit;
  }

  private context(): LearnContext {
    const now = this.clock.now();
    const held = this.state.limit ?? MAX;
    return {
      now,
      maxConcurrent: MAX,
      adaptive: true,
      held,
      queued: 1,
      slot: { acquiredAt: now, heldAtGrant: held },
    };
  }

  /** `count` busy successes, `spacingMs` apart (no sleeps: the manual clock moves). */
  async succeed(count: number, spacingMs = 0): Promise<void> {
    for (let index = 0; index < count; index += 1) {
      if (spacingMs > 0) await this.clock.advance(spacingMs);
      this.state = learn(this.state, SUCCESS, this.context());
    }
  }

  /** Busy successes until the limit rises (a probe starts) or `budget` runs out; returns how many. */
  async succeedUntilProbe(spacingMs: number, budget = 10_000): Promise<number> {
    const before = this.state.limit;
    for (let count = 1; count <= budget; count += 1) {
      await this.succeed(1, spacingMs);
      if (this.state.limit !== before) return count;
    }
    return Number.POSITIVE_INFINITY;
  }

  async throttle(outcome: ParsedOutcome = CONCURRENCY_429): Promise<void> {
    await this.clock.advance(1);
    this.state = learn(this.state, outcome, this.context());
  }

  report(rate: RateInfo): void {
    const outcome = { ...SUCCESS, rate };
    this.state = learn(this.state, outcome, { ...this.context(), held: 0, queued: 0 });
  }
}

describe("probe backoff: failed probes at one level", () => {
  it("each failed probe doubles the wait and the successes the next probe there needs", async () => {
    const pool = new Pool(4);
    expect(await pool.succeedUntilProbe(0)).toBe(PROBE_FACTOR * 4);
    expect(pool.limit).toBe(5);
    await pool.throttle();
    expect(pool.limit).toBe(4);
    expect(pool.state.probe).toMatchObject({ level: 5, failures: 1 });

    // Successes arriving at once: the time gate holds the probe back.
    await pool.succeed(1_000);
    expect(pool.limit).toBe(4);
    await pool.clock.advance(PROBE_WAIT_BASE_MS);
    await pool.succeed(1);
    expect(pool.limit).toBe(5);
    await pool.throttle();
    expect(pool.state.probe.failures).toBe(2);

    // Slow successes: the success count holds it back (2 failures: 4 × 5 × 2² = 80).
    expect(await pool.succeedUntilProbe(10_000)).toBe(successesToProbe(4, 2));
    expect(successesToProbe(4, 2)).toBe(80);
  });

  it("waits at most PROBE_WAIT_CAP_MS and PROBE_SUCCESS_CAP successes however often it failed", async () => {
    const pool = new Pool(12);
    for (let failures = 1; failures <= 12; failures += 1) {
      await pool.succeedUntilProbe(10);
      await pool.throttle();
      expect(pool.state.probe).toMatchObject({ level: 13, failures });
    }
    const failedAt = pool.clock.now();
    const status = learnerStatus(pool.state, failedAt);
    expect(status).toEqual({
      limit: 12,
      nextProbeLevel: 13,
      nextProbeInMs: PROBE_WAIT_CAP_MS,
      successesToNextProbe: PROBE_SUCCESS_CAP,
      failedProbes: 12,
    });
    // Successes every 200 ms cover the success cap in 80 s, past the time cap.
    const taken = await pool.succeedUntilProbe(200);
    expect(taken).toBe(PROBE_SUCCESS_CAP);
    expect(probeWaitMs(1000)).toBe(PROBE_WAIT_CAP_MS);
  });

  it("a throttle at another level starts a new count there", async () => {
    const pool = new Pool(12);
    await pool.succeedUntilProbe(10);
    await pool.throttle();
    await pool.clock.advance(PROBE_WAIT_BASE_MS);
    await pool.succeedUntilProbe(10);
    await pool.throttle();
    expect(pool.state.probe).toMatchObject({ level: 13, failures: 2 });
    // The upstream's limit drops: a throttle at 12 is the first failure at 12.
    await pool.throttle();
    expect(pool.limit).toBe(11);
    expect(pool.state.probe).toMatchObject({ level: 12, failures: 1 });
  });

  it("a probe below the failing level (climbing back after a drop) needs only the plain streak", async () => {
    const pool = new Pool(12);
    await pool.succeedUntilProbe(10);
    await pool.throttle(); // fails at 13
    pool.state = { ...pool.state, limit: 8 }; // as after a drop and recovery below
    expect(await pool.succeedUntilProbe(0)).toBe(PROBE_FACTOR * 8);
    expect(pool.limit).toBe(9);
  });
});

describe("probe backoff: reset", () => {
  async function backedOff(): Promise<Pool> {
    const pool = new Pool(6);
    for (let failures = 0; failures < 6; failures += 1) {
      await pool.succeedUntilProbe(10);
      await pool.throttle();
    }
    expect(pool.state.probe).toMatchObject({ level: 7, failures: 6 });
    return pool;
  }

  function expectNoBackoff(pool: Pool): void {
    expect(pool.state.probe).toBe(NO_BACKOFF);
    const status = learnerStatus(pool.state, pool.clock.now());
    expect(status.failedProbes).toBe(0);
    expect(status.nextProbeInMs).toBe(0);
  }

  it("a probe that holds (a full streak at the level that failed) clears it", async () => {
    const pool = await backedOff();
    await pool.succeedUntilProbe(100);
    expect(pool.limit).toBe(7);
    // The upstream now serves 7: the streak at 7 completes and the next probe, to 8, starts.
    expect(await pool.succeedUntilProbe(0)).toBe(PROBE_FACTOR * 7);
    expect(pool.limit).toBe(8);
    expectNoBackoff(pool);
  });

  it("a higher limit or another window in the upstream's rate headers clears it", async () => {
    const pool = await backedOff();
    pool.report({ limit: 6000, remaining: 10, windowMs: 60_000 });
    expect(pool.state.probe.failures).toBe(6); // same report: no news
    pool.report({ limit: 6000, remaining: 900 }); // remaining alone: no news either
    expect(pool.state.probe.failures).toBe(6);
    pool.report({ limit: 9000, remaining: 10, windowMs: 60_000 });
    expectNoBackoff(pool);

    const again = await backedOff();
    again.report({ limit: 6000, windowMs: 60_000 });
    again.report({ limit: 100, windowMs: 1000 });
    expectNoBackoff(again);

    const tokens = await backedOff();
    tokens.report({ tokenLimit: 1_000 });
    tokens.report({ tokenLimit: 2_000 });
    expectNoBackoff(tokens);
  });

  it("a lower limit in the headers keeps it", async () => {
    const pool = await backedOff();
    pool.report({ limit: 3000, windowMs: 60_000 });
    expect(pool.state.probe.failures).toBe(6);
  });

  it(`a quiet period of ${QUIET_RESET_MS / 60_000} minutes clears it; a shorter one does not`, async () => {
    const pool = await backedOff();
    await pool.clock.advance(QUIET_RESET_MS - 10);
    await pool.succeed(1);
    expect(pool.state.probe.failures).toBe(6);

    const quiet = await backedOff();
    await quiet.clock.advance(QUIET_RESET_MS);
    await quiet.succeed(1);
    expectNoBackoff(quiet);
    expect(await quiet.succeedUntilProbe(0)).toBe(PROBE_FACTOR * 6 - 1);
  });

  it("a pool that stops being adaptive forgets it", async () => {
    const pool = await backedOff();
    pool.state = learn(pool.state, SUCCESS, {
      now: pool.clock.now(),
      maxConcurrent: MAX,
      adaptive: false,
      held: 1,
      queued: 0,
      slot: { acquiredAt: 0, heldAtGrant: 1 },
    });
    expect(pool.state.probe).toBe(NO_BACKOFF);
  });
});
