import { describe, expect, it } from "vitest";
import {
  initialLearnerState,
  type LearnContext,
  type LearnerState,
  learn,
  MAX_PAUSE_MS,
  PROBE_FACTOR,
  toLearnedLimits,
} from "../../src/learning/learner.js";
import { parseOutcome } from "../../src/learning/parse-outcome.js";
import { NO_BACKOFF } from "../../src/learning/probe-backoff.js";
import type { OutcomeReport, ParsedOutcome } from "../../src/learning/types.js";

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const MAX = 10;

function context(overrides: Partial<LearnContext> = {}): LearnContext {
  return {
    now: NOW,
    maxConcurrent: MAX,
    adaptive: true,
    held: MAX,
    queued: 0,
    slot: { acquiredAt: NOW - 1000, heldAtGrant: MAX },
    ...overrides,
  };
}

function outcome(report: OutcomeReport, now = NOW): ParsedOutcome {
  return parseOutcome(report, now);
}

function stateWith(overrides: Partial<LearnerState>): LearnerState {
  return { ...initialLearnerState(), ...overrides };
}

const SUCCESS = outcome({ status: 200 });
const THROTTLE = outcome({ status: 429 });

describe("learn: concurrency decrease on throttle", () => {
  it("drops to one below the slots held when the throttled slot was granted", () => {
    const next = learn(
      initialLearnerState(),
      THROTTLE,
      context({ slot: { acquiredAt: NOW - 50, heldAtGrant: 8 } }),
    );
    expect(next).toStrictEqual({
      limit: 7,
      lastDecreaseAt: NOW,
      successStreak: 0,
      rpm: null,
      pausedUntil: 0,
      // The level the throttle answered no at: its next probe backs off.
      probe: { level: 8, failures: 1, failedAt: NOW },
      activeAt: NOW,
      reported: null,
    });
    expect(toLearnedLimits(next, MAX)).toStrictEqual({
      concurrency: 7,
      rpm: null,
      pausedUntil: 0,
      probe: { level: 8, failures: 1, failedAt: NOW },
    });
  });

  it("decreases from the lower of the current limit and the slots held at grant", () => {
    const state = stateWith({ limit: 5, lastDecreaseAt: NOW - 10_000 });
    expect(
      learn(state, THROTTLE, context({ slot: { acquiredAt: NOW - 100, heldAtGrant: 9 } })).limit,
    ).toBe(4);
    expect(
      learn(state, THROTTLE, context({ slot: { acquiredAt: NOW - 100, heldAtGrant: 3 } })).limit,
    ).toBe(2);
  });

  it("counts a throttled retry that ended in success as a throttle", () => {
    expect(
      learn(initialLearnerState(), outcome({ status: 200, throttled: 2 }), context()).limit,
    ).toBe(MAX - 1);
  });

  it("ignores a throttle on a slot granted before the last decrease, or in its millisecond", () => {
    const state = stateWith({ limit: 6, lastDecreaseAt: NOW - 500 });
    for (const acquiredAt of [NOW - 501, NOW - 500]) {
      const stale = context({ slot: { acquiredAt, heldAtGrant: 8 } });
      expect(learn(state, THROTTLE, stale)).toBe(state);
    }
    const fresh = context({ slot: { acquiredAt: NOW - 499, heldAtGrant: 8 } });
    expect(learn(state, THROTTLE, fresh).limit).toBe(5);
  });

  it("learns from the first throttle even at time 0 (a ManualClock's start)", () => {
    const atZero = context({ now: 0, slot: { acquiredAt: 0, heldAtGrant: 4 } });
    expect(learn(initialLearnerState(), THROTTLE, atZero).limit).toBe(3);
  });

  it("never goes below 1", () => {
    let state = initialLearnerState();
    for (let step = 0; step < 20; step += 1) {
      const now = NOW + step * 1000;
      state = learn(state, THROTTLE, context({ now, slot: { acquiredAt: now, heldAtGrant: 1 } }));
    }
    expect(state.limit).toBe(1);
    expect(toLearnedLimits(state, MAX).concurrency).toBe(1);
  });

  it("does not decrease when the throttle is an exhausted rate window, only pauses", () => {
    const exhausted = outcome({
      status: 429,
      headers: {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "20s",
      },
    });
    const next = learn(initialLearnerState(), exhausted, context());
    expect(next).toStrictEqual({
      limit: null,
      lastDecreaseAt: Number.NEGATIVE_INFINITY,
      successStreak: 0,
      rpm: 500,
      pausedUntil: NOW + 20_000,
      probe: NO_BACKOFF,
      activeAt: Number.NEGATIVE_INFINITY,
      reported: { limit: 500, windowMs: 60_000, tokenLimit: undefined },
    });
  });

  it("does not decrease on an exhausted token window either", () => {
    const tokens = outcome({ status: 429, rate: { tokenRemaining: 0, tokenResetMs: 5000 } });
    const next = learn(initialLearnerState(), tokens, context());
    expect(next.limit).toBeNull();
    expect(next.pausedUntil).toBe(NOW + 5000);
  });

  it("learns no concurrency when the pool is not adaptive, and forgets what it had", () => {
    expect(learn(initialLearnerState(), THROTTLE, context({ adaptive: false }))).toStrictEqual(
      initialLearnerState(),
    );
    expect(learn(stateWith({ limit: 4 }), SUCCESS, context({ adaptive: false })).limit).toBeNull();
  });

  it("still pauses a non-adaptive pool on Retry-After", () => {
    const next = learn(
      initialLearnerState(),
      outcome({ status: 429, retryAfterMs: 3000 }),
      context({ adaptive: false }),
    );
    expect(next.pausedUntil).toBe(NOW + 3000);
    expect(next.limit).toBeNull();
  });
});

describe("learn: probing back up", () => {
  function successes(
    start: LearnerState,
    count: number,
    busy: Partial<LearnContext>,
  ): LearnerState {
    let state = start;
    for (let index = 0; index < count; index += 1) state = learn(state, SUCCESS, context(busy));
    return state;
  }

  it(`adds one after PROBE_FACTOR × limit busy successes (${PROBE_FACTOR} × 4 = 20)`, () => {
    const start = stateWith({ limit: 4 });
    const almost = successes(start, PROBE_FACTOR * 4 - 1, { held: 4 });
    expect(almost).toMatchObject({ limit: 4, successStreak: PROBE_FACTOR * 4 - 1 });
    expect(successes(almost, 1, { held: 4 })).toMatchObject({ limit: 5, successStreak: 0 });
  });

  it("counts a queue as busy even when fewer slots are held", () => {
    expect(successes(stateWith({ limit: 2 }), PROBE_FACTOR * 2, { held: 1, queued: 3 }).limit).toBe(
      3,
    );
  });

  it("does not probe when the pool is idle", () => {
    const start = stateWith({ limit: 4 });
    const next = successes(start, 100, { held: 3, queued: 0 });
    expect(next).toBe(start);
  });

  it("treats an unknown status as success and 4xx other than 429 as neither", () => {
    const start = stateWith({ limit: 4 });
    expect(learn(start, outcome({}), context({ held: 4 })).successStreak).toBe(1);
    expect(learn(start, outcome({ status: 404 }), context({ held: 4 }))).toBe(start);
  });

  it("returns to nothing learned when the limit reaches maxConcurrent, never above it", () => {
    const start = stateWith({ limit: MAX - 1 });
    const next = successes(start, PROBE_FACTOR * (MAX - 1), { held: MAX });
    expect(next.limit).toBeNull();
    expect(toLearnedLimits(next, MAX).concurrency).toBeNull();
    expect(successes(next, 100, { held: MAX, queued: 5 })).toBe(next);
  });

  it("clamps a limit left above a lowered maxConcurrent", () => {
    const state = stateWith({ limit: 8 });
    expect(toLearnedLimits(state, 5).concurrency).toBe(5);
    expect(learn(state, THROTTLE, context({ maxConcurrent: 5 })).limit).toBe(4);
  });
});

describe("learn: pauses", () => {
  it("pauses until now + Retry-After and never moves the pause back", () => {
    const paused = learn(
      initialLearnerState(),
      outcome({ status: 429, headers: { "retry-after": "30" } }),
      context(),
    );
    expect(paused.pausedUntil).toBe(NOW + 30_000);
    const shorter = learn(
      paused,
      outcome({ status: 429, retryAfterMs: 1000 }),
      context({ now: NOW + 10 }),
    );
    expect(shorter.pausedUntil).toBe(NOW + 30_000);
  });

  it("a Retry-After on a success or redirect pauses nothing; on any 4xx or with no status it pauses", () => {
    for (const status of [200, 202, 301, 303]) {
      const next = learn(
        initialLearnerState(),
        outcome({ status, headers: { "retry-after": "5" } }),
        context(),
      );
      expect(next.pausedUntil).toBe(0);
    }
    for (const reported of [{ status: 403 }, { status: 400 }, {}]) {
      const next = learn(
        initialLearnerState(),
        outcome({ ...reported, retryAfterMs: 5000 }),
        context(),
      );
      expect(next.pausedUntil).toBe(NOW + 5000);
    }
    // A success that also counts throttled attempts (retried internally) still pauses.
    const retried = learn(
      initialLearnerState(),
      outcome({ status: 200, throttled: 2, retryAfterMs: 5000 }),
      context(),
    );
    expect(retried.pausedUntil).toBe(NOW + 5000);
  });

  it("never pauses longer than MAX_PAUSE_MS, whatever a caller or an upstream reports", () => {
    const TEN_YEARS = 315_576_000_000;
    const reports: OutcomeReport[] = [
      { status: 429, retryAfterMs: TEN_YEARS },
      { status: 200, rate: { limit: 100, remaining: 0, resetMs: TEN_YEARS } },
      { status: 200, rate: { tokenLimit: 100, tokenRemaining: 0, tokenResetMs: TEN_YEARS } },
      { status: 503, headers: { "retry-after": String(TEN_YEARS / 1000) } },
      { status: 429, headers: { "retry-after": "Fri, 01 Jan 2027 00:00:00 GMT" } },
      { status: 429, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "86400" } },
    ];
    for (const report of reports) {
      const next = learn(initialLearnerState(), outcome(report), context({ adaptive: false }));
      expect(next.pausedUntil, JSON.stringify(report)).toBe(NOW + MAX_PAUSE_MS);
    }
    // A pause kept from before the cap (in Redis) is cut back at the next outcome.
    const legacy = stateWith({ pausedUntil: NOW + TEN_YEARS });
    expect(learn(legacy, SUCCESS, context()).pausedUntil).toBe(NOW + MAX_PAUSE_MS);
    expect(learn(legacy, outcome({ status: 500 }), context()).pausedUntil).toBe(NOW + MAX_PAUSE_MS);
  });

  it("pauses on a success that reports the request window exhausted", () => {
    const next = learn(
      initialLearnerState(),
      outcome({ status: 200, rate: { remaining: 0, resetMs: 4000 } }),
      context(),
    );
    expect(next.pausedUntil).toBe(NOW + 4000);
  });

  it("pauses on 503 with Retry-After and changes nothing on other 5xx", () => {
    const start = stateWith({ limit: 4 });
    expect(
      learn(start, outcome({ status: 503, headers: { "retry-after": "5" } }), context()),
    ).toStrictEqual({
      ...start,
      pausedUntil: NOW + 5000,
    });
    expect(learn(start, outcome({ status: 503 }), context())).toBe(start);
    const rateHeaders = {
      "retry-after": "5",
      "x-ratelimit-limit-requests": "1",
      "x-ratelimit-remaining-requests": "0",
    };
    expect(learn(start, outcome({ status: 500, headers: rateHeaders }), context())).toBe(start);
    expect(learn(start, outcome({ status: 502, throttled: 3 }), context())).toBe(start);
  });
});

describe("learn: learned RPM from each dialect's window", () => {
  const cases: [string, Record<string, string>, number][] = [
    ["OpenAI per minute", { "x-ratelimit-limit-requests": "10000" }, 10_000],
    ["Anthropic per minute", { "anthropic-ratelimit-requests-limit": "50" }, 50],
    [
      "GitHub core, 5000 per hour",
      { "x-ratelimit-limit": "5000", "x-ratelimit-resource": "core" },
      83,
    ],
    [
      "GitHub search, 30 per minute",
      { "x-ratelimit-limit": "30", "x-ratelimit-resource": "search" },
      30,
    ],
    [
      "IETF 100 per 10 s",
      { "ratelimit-policy": '"default";q=100;w=10', ratelimit: '"default";r=99;t=10' },
      600,
    ],
    ["IETF older 5 per 15 min", { "ratelimit-limit": "5, 5;w=900" }, 1],
    ["IETF 1000 per day, floored at 1", { "ratelimit-policy": "1000;w=86400" }, 1],
    ["generic, window unknown: per minute", { "x-ratelimit-limit": "120" }, 120],
  ];

  it.each(cases)("%s", (_name, headers, rpm) => {
    const next = learn(initialLearnerState(), outcome({ status: 200, headers }), context());
    expect(next.rpm).toBe(rpm);
    expect(toLearnedLimits(next, MAX).rpm).toBe(rpm);
  });

  it("keeps the latest observation", () => {
    const first = learn(initialLearnerState(), outcome({ rate: { limit: 100 } }), context());
    expect(learn(first, outcome({ rate: { limit: 30, windowMs: 60_000 } }), context()).rpm).toBe(
      30,
    );
    expect(learn(first, outcome({ rate: { remaining: 4 } }), context())).toBe(first);
  });
});

describe("toLearnedLimits", () => {
  it("writes whole milliseconds (as Redis hands them back: a fraction would read as another process's change)", () => {
    const state = stateWith({
      pausedUntil: NOW + 0.5,
      probe: { level: 4, failures: 2, failedAt: NOW + 0.25 },
    });
    expect(toLearnedLimits(state, MAX)).toMatchObject({
      pausedUntil: NOW + 1,
      probe: { level: 4, failures: 2, failedAt: NOW + 1 },
    });
  });
});

describe("learn: identity", () => {
  it("returns the same object when nothing changed", () => {
    const state = stateWith({
      limit: 3,
      rpm: 60,
      pausedUntil: NOW + 10,
      reported: { limit: 60, windowMs: undefined, tokenLimit: undefined },
    });
    expect(learn(state, outcome({ status: 204 }), context({ held: 1 }))).toBe(state);
    expect(learn(state, outcome({ rate: { limit: 60 } }), context({ held: 1 }))).toBe(state);
  });
});
