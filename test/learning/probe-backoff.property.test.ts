import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { initialLearnerState, type LearnerState, learn } from "../../src/learning/learner.js";
import { learnerStatus } from "../../src/learning/learner-status.js";
import {
  NO_BACKOFF,
  PROBE_FACTOR,
  PROBE_WAIT_CAP_MS,
  probeWaitMs,
  QUIET_RESET_MS,
  successesToProbe,
} from "../../src/learning/probe-backoff.js";
import type { ParsedOutcome } from "../../src/learning/types.js";

const RATE = { limit: 6000, remaining: 4000, windowMs: 60_000 };
const SUCCESS: ParsedOutcome = { status: 200, throttled: false, retryAfterMs: null, rate: RATE };
const THROTTLE: ParsedOutcome = { status: 429, throttled: true, retryAfterMs: 100, rate: RATE };

interface Failure {
  at: number;
  /** The level throttled (the pool's limit when the call was granted). */
  level: number;
  /** Busy successes since the previous failure. */
  successes: number;
}

/**
 * Drives a learner against an upstream with a hidden concurrency limit on a ManualClock: every
 * call is busy (granted with the pool at its learned limit), succeeds at or under the hidden
 * limit and is throttled above it. Returns each failed probe.
 */
async function runAgainstHiddenLimit(
  hidden: number,
  maxConcurrent: number,
  gapsMs: readonly number[],
): Promise<{ failures: Failure[]; state: LearnerState; clock: ManualClock }> {
  const clock = new ManualClock(0);
  let state: LearnerState = initialLearnerState();
  const failures: Failure[] = [];
  let successes = 0;
  for (const gap of gapsMs) {
    await clock.advance(gap);
    const now = clock.now();
    const level = state.limit ?? maxConcurrent;
    const over = level > hidden;
    state = learn(state, over ? THROTTLE : SUCCESS, {
      now,
      maxConcurrent,
      adaptive: true,
      held: level,
      queued: 1,
      slot: { acquiredAt: now, heldAtGrant: level },
    });
    if (over) {
      failures.push({ at: now, level, successes });
      successes = 0;
    } else successes += 1;
  }
  return { failures, state, clock };
}

const scenario = fc.record({
  hidden: fc.integer({ min: 1, max: 16 }),
  extra: fc.integer({ min: 1, max: 16 }),
  gapsMs: fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 200, maxLength: 3000 }),
});

describe("probe backoff: properties against a hidden limit", () => {
  it("the k-th failed probe at a level comes no sooner than the backoff after the (k−1)-th, in time and in successes", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ hidden, extra, gapsMs }) => {
        const { failures, state } = await runAgainstHiddenLimit(hidden, hidden + extra, gapsMs);
        // The limit comes down one level per throttle to the hidden one; from then on every
        // throttle is a failed probe at hidden + 1, and they back off.
        let inARow = 0; // earlier failures at the level of the current one, in a row
        for (let index = 0; index < failures.length; index += 1) {
          const failure = failures[index]!;
          const previous = failures[index - 1];
          inARow = previous?.level === failure.level ? inARow + 1 : 0;
          if (previous === undefined || inARow === 0) continue;
          expect(failure.level).toBe(hidden + 1);
          expect(failure.at - previous.at).toBeGreaterThanOrEqual(probeWaitMs(inARow));
          expect(failure.successes).toBeGreaterThanOrEqual(successesToProbe(hidden, inARow));
        }
        const last = failures.at(-1);
        if (last !== undefined) {
          expect(state.limit ?? Number.POSITIVE_INFINITY).toBeGreaterThanOrEqual(hidden);
          expect(state.probe).toMatchObject({ level: last.level, failures: inARow + 1 });
        }
      }),
      { numRuns: 60 },
    );
  });

  it("once the wait is capped, failed probes are at most one per PROBE_WAIT_CAP_MS", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 20, max: 400 }),
        async (hidden, gapMs) => {
          const minutes = 10;
          const gaps = new Array<number>(Math.ceil((minutes * 60_000) / gapMs)).fill(gapMs);
          const { failures } = await runAgainstHiddenLimit(hidden, hidden + 4, gaps);
          const uncapped = Math.ceil(Math.log2(PROBE_WAIT_CAP_MS / 1000)) + 1;
          const capped = Math.ceil((minutes * 60_000) / PROBE_WAIT_CAP_MS);
          expect(failures.length).toBeLessThanOrEqual(1 + uncapped + capped);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("a reset (headers reporting more room, or a quiet period) leaves no backoff, from any backed-off state", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.boolean(), async ({ hidden, extra, gapsMs }, byHeaders) => {
        const { state, clock } = await runAgainstHiddenLimit(hidden, hidden + extra, gapsMs);
        const now = clock.now() + (byHeaders ? 1 : QUIET_RESET_MS);
        const level = state.limit ?? hidden + extra;
        const outcome = byHeaders
          ? { ...SUCCESS, rate: { ...RATE, limit: RATE.limit * 2 } }
          : SUCCESS;
        const next = learn(state, outcome, {
          now,
          maxConcurrent: hidden + extra,
          adaptive: true,
          held: level,
          queued: 1,
          slot: { acquiredAt: now, heldAtGrant: level },
        });
        expect(next.probe).toBe(NO_BACKOFF);
        const status = learnerStatus(next, now);
        expect(status.failedProbes).toBe(0);
        if (status.limit !== null) {
          expect(status.nextProbeInMs).toBe(0);
          expect(status.successesToNextProbe).toBeLessThanOrEqual(PROBE_FACTOR * status.limit);
        }
      }),
      { numRuns: 60 },
    );
  });
});
