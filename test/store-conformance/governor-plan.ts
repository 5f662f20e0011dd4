import fc from "fast-check";
import type { PoolSettingsInput } from "../../src/governor/settings.js";
import type { OutcomeReport } from "../../src/learning/types.js";

/** The pools of every run. */
export const POOL_NAMES = ["a", "b", "c"] as const;
/** One of {@link POOL_NAMES}. */
export type PoolName = (typeof POOL_NAMES)[number];
/** Pools a and b share this budget; c stands alone and may have an RPM gate. */
export const BUDGET = "shared";

/** One pool's settings in a run (adaptive off, so learned concurrency never interferes). */
export interface PoolPlan {
  maxConcurrent: number;
  queueSize: number;
  queueTimeoutMs: number;
  termMs: number;
  requestTimeoutMs: number;
  rpm: number | null;
}

/** The pools and budget of one property run. */
export interface RunPlan {
  pools: Record<PoolName, PoolPlan>;
  origin: number | null;
  reserved: { a: number; b: number };
}

/** An acquire without a signal, with one that may abort later, or with one already aborted. */
export type SignalKind = "none" | "live" | "aborted";

/** What a release reports, for the governor to learn from (non-adaptive: pause and RPM only). */
export type OutcomeSpec = { kind: "pause"; retryAfterMs: number } | { kind: "rate"; limit: number };

/** One random step of a property run. */
export type Command =
  | {
      kind: "acquire";
      pool: PoolName;
      waitMs: number | undefined;
      noQueue: boolean;
      signal: SignalKind;
      /** With a live signal: abort it this long after the call, on the clock (null: never). */
      abortAfterMs: number | null;
    }
  /** `live` picks among slots still held; otherwise among every slot ever granted. */
  | { kind: "release"; pick: number; live: boolean; outcome: OutcomeSpec | null }
  | { kind: "renew"; pick: number; live: boolean }
  /**
   * `waiting` picks among callers still waiting, otherwise among all with a signal;
   * `delayMs` > 0 schedules the abort on the clock, to land amid store timers.
   */
  | { kind: "abort"; pick: number; waiting: boolean; delayMs: number }
  | { kind: "advance"; ms: number }
  | { kind: "resize"; pool: PoolName; maxConcurrent: number };

function poolPlanArb(rpm: fc.Arbitrary<number | null>): fc.Arbitrary<PoolPlan> {
  return fc
    .record({
      maxConcurrent: fc.integer({ min: 1, max: 3 }),
      queueSize: fc.oneof(
        { weight: 1, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.integer({ min: 1, max: 4 }) },
      ),
      // Some waits outlast an RPM window, so waiters also queue for the gate.
      queueTimeoutMs: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 300, max: 5_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 30_000, max: 70_000 }) },
      ),
      termMs: fc.integer({ min: 300, max: 1_500 }),
      extraRequestMs: fc.integer({ min: 0, max: 3_000 }),
      rpm,
    })
    .map(({ extraRequestMs, ...plan }) => ({
      ...plan,
      requestTimeoutMs: plan.termMs + extraRequestMs,
    }));
}

/** Random pools small enough that limits, queues, leases and gates are hit often. */
export const runPlanArb: fc.Arbitrary<RunPlan> = fc
  .record({
    a: poolPlanArb(fc.constant(null)),
    b: poolPlanArb(fc.constant(null)),
    c: poolPlanArb(fc.option(fc.integer({ min: 1, max: 3 }), { nil: null })),
    origin: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
    reservedA: fc.integer({ min: 0, max: 2 }),
    reservedB: fc.integer({ min: 0, max: 2 }),
  })
  .map(({ a, b, c, origin, reservedA, reservedB }) => {
    // The governor refuses reservations above the budget's ceiling.
    const reservedForA = origin === null ? reservedA : Math.min(reservedA, origin);
    const reservedForB = origin === null ? reservedB : Math.min(reservedB, origin - reservedForA);
    return { pools: { a, b, c }, origin, reserved: { a: reservedForA, b: reservedForB } };
  });

const poolArb = fc.constantFrom(...POOL_NAMES);
const mostlyTrue = fc.oneof(
  { weight: 3, arbitrary: fc.constant(true) },
  { weight: 1, arbitrary: fc.constant(false) },
);

const acquireArb: fc.Arbitrary<Command> = fc.record({
  kind: fc.constant("acquire" as const),
  pool: poolArb,
  waitMs: fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 1_000 }) },
    { weight: 4, arbitrary: fc.integer({ min: 1_000, max: 10_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 70_000 }) },
  ),
  noQueue: fc.oneof(
    { weight: 5, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
  signal: fc.oneof(
    { weight: 4, arbitrary: fc.constant<SignalKind>("none") },
    { weight: 4, arbitrary: fc.constant<SignalKind>("live") },
    { weight: 1, arbitrary: fc.constant<SignalKind>("aborted") },
  ),
  abortAfterMs: fc.oneof(
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 3_000 }) },
  ),
});

const outcomeArb: fc.Arbitrary<OutcomeSpec | null> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(null) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("pause" as const),
      retryAfterMs: fc.integer({ min: 1, max: 5_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("rate" as const),
      limit: fc.integer({ min: 1, max: 4 }),
    }),
  },
);

/** The report a release sends for an outcome spec. */
export function outcomeReport(outcome: OutcomeSpec): OutcomeReport {
  return outcome.kind === "pause"
    ? { status: 429, retryAfterMs: outcome.retryAfterMs }
    : { status: 200, rate: { limit: outcome.limit, windowMs: 60_000 } };
}

/** One random step: acquires dominate so pools fill up and queues form. */
export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 10, arbitrary: acquireArb },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      pick: fc.nat(),
      live: mostlyTrue,
      outcome: outcomeArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("renew" as const), pick: fc.nat(), live: mostlyTrue }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("abort" as const),
      pick: fc.nat(),
      waiting: mostlyTrue,
      delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_500 })),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 1, max: 300 }) },
        { weight: 3, arbitrary: fc.integer({ min: 300, max: 3_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 20_000, max: 65_000 }) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("resize" as const),
      pool: poolArb,
      maxConcurrent: fc.integer({ min: 1, max: 4 }),
    }),
  },
);

/** The governor settings for one pool of a plan (adaptive off: the model has no learner). */
export function poolSettings(plan: RunPlan, pool: PoolName): PoolSettingsInput {
  const p = plan.pools[pool];
  const budget = pool === "c" ? null : { id: BUDGET, reservedConcurrent: plan.reserved[pool] };
  return {
    maxConcurrent: p.maxConcurrent,
    queue: { size: p.queueSize, timeoutMs: p.queueTimeoutMs },
    rpm: p.rpm,
    requestTimeoutMs: p.requestTimeoutMs,
    termMs: p.termMs,
    renewIntervalMs: Math.max(1, Math.floor(p.termMs / 3)),
    adaptive: false,
    budget,
  };
}

/**
 * Heavy contention: one slot per pool, long queues and waits, short leases, so handoffs on
 * reclaim and aborts or timeouts racing them are the common case rather than the rare one.
 */
export const contentionPlanArb: fc.Arbitrary<RunPlan> = fc
  .record({
    termMs: fc.integer({ min: 100, max: 600 }),
    extraRequestMs: fc.integer({ min: 0, max: 600 }),
    queueTimeoutMs: fc.integer({ min: 500, max: 3_000 }),
    queueSize: fc.integer({ min: 2, max: 4 }),
    rpm: fc.option(fc.integer({ min: 2, max: 6 }), { nil: null }),
  })
  .map(({ termMs, extraRequestMs, queueTimeoutMs, queueSize, rpm }) => {
    const pool = { maxConcurrent: 1, queueSize, queueTimeoutMs, termMs, rpm: null };
    const requestTimeoutMs = termMs + extraRequestMs;
    return {
      pools: {
        a: { ...pool, requestTimeoutMs },
        b: { ...pool, requestTimeoutMs },
        c: { ...pool, requestTimeoutMs, rpm },
      },
      origin: 1,
      reserved: { a: 0, b: 0 },
    };
  });

const contentionAcquireArb: fc.Arbitrary<Command> = fc.record({
  kind: fc.constant("acquire" as const),
  pool: poolArb,
  waitMs: fc.integer({ min: 200, max: 3_000 }),
  noQueue: fc.constant(false),
  signal: fc.constant<SignalKind>("live"),
  abortAfterMs: fc.option(fc.integer({ min: 1, max: 1_500 }), { nil: null }),
});

/** Steps for {@link contentionPlanArb}: mostly acquires and small advances. */
export const contentionCommandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: contentionAcquireArb },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 700 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      pick: fc.nat(),
      live: fc.constant(true),
      outcome: fc.constant(null),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("renew" as const),
      pick: fc.nat(),
      live: fc.constant(true),
    }),
  },
);
