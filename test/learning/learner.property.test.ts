import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  initialLearnerState,
  type LearnerState,
  learn,
  toLearnedLimits,
} from "../../src/learning/learner.js";
import type { ParsedOutcome, RateInfo } from "../../src/learning/types.js";

const START = Date.UTC(2025, 0, 15, 12, 0, 0);

const rateArbitrary: fc.Arbitrary<RateInfo> = fc.record(
  {
    limit: fc.nat({ max: 100_000 }),
    remaining: fc.oneof(fc.constant(0), fc.nat({ max: 1000 })),
    resetMs: fc.nat({ max: 600_000 }),
    windowMs: fc.integer({ min: 1, max: 86_400_000 }),
    tokenRemaining: fc.oneof(fc.constant(0), fc.nat({ max: 1000 })),
    tokenResetMs: fc.nat({ max: 600_000 }),
  },
  { requiredKeys: [] },
);

const outcomeArbitrary: fc.Arbitrary<ParsedOutcome> = fc
  .record({
    status: fc.option(fc.constantFrom(200, 201, 204, 400, 404, 429, 500, 502, 503), { nil: null }),
    extraThrottle: fc.boolean(),
    retryAfterMs: fc.option(fc.nat({ max: 120_000 }), { nil: null }),
    rate: fc.option(rateArbitrary, { nil: null }),
  })
  .map(({ status, extraThrottle, retryAfterMs, rate }) => ({
    status,
    throttled: status === 429 || extraThrottle,
    retryAfterMs,
    rate,
  }));

const stepArbitrary = fc.record({
  outcome: outcomeArbitrary,
  advanceMs: fc.nat({ max: 5000 }),
  held: fc.nat({ max: 25 }),
  queued: fc.nat({ max: 5 }),
  grantedAgoMs: fc.nat({ max: 20_000 }),
  heldAtGrant: fc.integer({ min: 1, max: 25 }),
});

describe("learn: properties", () => {
  it("keeps 1 ≤ concurrency ≤ maxConcurrent, rpm ≥ 1 and pausedUntil monotonic for any outcome sequence", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.boolean(),
        fc.array(stepArbitrary, { maxLength: 200 }),
        (maxConcurrent, adaptive, steps) => {
          let state = initialLearnerState();
          let now = START;
          for (const step of steps) {
            now += step.advanceMs;
            const next = learn(state, step.outcome, {
              now,
              maxConcurrent,
              adaptive,
              held: step.held,
              queued: step.queued,
              slot: { acquiredAt: now - step.grantedAgoMs, heldAtGrant: step.heldAtGrant },
            });
            expect(next.pausedUntil).toBeGreaterThanOrEqual(state.pausedUntil);
            if (next.limit !== null) {
              expect(next.limit).toBeGreaterThanOrEqual(1);
              expect(next.limit).toBeLessThanOrEqual(maxConcurrent);
            }
            const learned = toLearnedLimits(next, maxConcurrent);
            if (learned.concurrency !== null) {
              expect(Number.isInteger(learned.concurrency)).toBe(true);
              expect(learned.concurrency).toBeGreaterThanOrEqual(1);
              expect(learned.concurrency).toBeLessThanOrEqual(maxConcurrent);
            }
            if (learned.rpm !== null) {
              expect(Number.isInteger(learned.rpm)).toBe(true);
              expect(learned.rpm).toBeGreaterThanOrEqual(1);
            }
            if (!adaptive) expect(learned.concurrency).toBeNull();
            if (next !== state) expect(next).not.toStrictEqual(state);
            state = next;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("recovers to nothing learned after enough busy successes, whatever was learned before", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 20 }),
        fc.integer({ min: 1, max: 19 }),
        (maxConcurrent, startLimit) => {
          let state: LearnerState = {
            ...initialLearnerState(),
            limit: Math.min(startLimit, maxConcurrent - 1),
          };
          const success: ParsedOutcome = {
            status: 200,
            throttled: false,
            retryAfterMs: null,
            rate: null,
          };
          for (let index = 0; index < 5 * maxConcurrent * maxConcurrent; index += 1) {
            state = learn(state, success, {
              now: START,
              maxConcurrent,
              adaptive: true,
              held: maxConcurrent,
              queued: 1,
              slot: { acquiredAt: START, heldAtGrant: maxConcurrent },
            });
          }
          expect(state.limit).toBeNull();
        },
      ),
    );
  });
});
