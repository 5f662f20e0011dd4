import { describe, it } from "vitest";
import type { Command, RunPlan } from "./governor-plan.js";
import { playScenario } from "./governor-scenario.js";
import type { StoreHarness } from "./store-fixture.js";

/** One shrunk counterexample of the governor properties, replayed step by step. */
interface Regression {
  title: string;
  plan: RunPlan;
  steps: Command[];
}

const POOL = { rpm: null, maxConcurrent: 1 } as const;

/** An acquire in pool a with a wait budget (before clamping) and a signal. */
function acquireA(
  waitMs: number,
  signal: "none" | "live",
  abortAfterMs: number | null = null,
): Command {
  return { kind: "acquire", pool: "a", waitMs, noQueue: false, signal, abortAfterMs };
}

/**
 * Counterexamples the property suite once found (seed 332238 against the Redis store, whose
 * handoff at a lease deadline reached the governor only after later timers had fired), and
 * hand-built races between a wait's timeout, a handoff and an abort. Each
 * is a fixed plan and command list, checked with every invariant after every step, so every
 * store runs them deterministically whatever seed the properties use.
 */
const REGRESSIONS: Regression[] = [
  {
    title:
      "hands the slot to the waiter at a lease deadline that is also its wait deadline, before a later abort",
    plan: {
      pools: {
        a: { ...POOL, queueSize: 1, queueTimeoutMs: 300, termMs: 300, requestTimeoutMs: 300 },
        b: { ...POOL, queueSize: 1, queueTimeoutMs: 300, termMs: 300, requestTimeoutMs: 300 },
        c: { ...POOL, queueSize: 0, queueTimeoutMs: 30_000, termMs: 300, requestTimeoutMs: 300 },
      },
      origin: null,
      reserved: { a: 0, b: 0 },
    },
    steps: [
      acquireA(1, "none"),
      // Waits 1000 ms clamped to the 300 ms queue timeout: the lease of #0 and the wait of #1
      // both end at 300; the abort lands at 301, after the handoff.
      acquireA(1000, "live", 301),
      { kind: "advance", ms: 301 },
      { kind: "release", pick: 0, live: true, outcome: null },
    ],
  },
  {
    title:
      "serves the head waiter at the holder's lease deadline, not the next one when wait deadlines pass",
    plan: {
      pools: {
        a: { ...POOL, queueSize: 2, queueTimeoutMs: 500, termMs: 100, requestTimeoutMs: 100 },
        b: { ...POOL, queueSize: 2, queueTimeoutMs: 500, termMs: 100, requestTimeoutMs: 100 },
        c: { ...POOL, queueSize: 2, queueTimeoutMs: 500, termMs: 100, requestTimeoutMs: 100 },
      },
      origin: 1,
      reserved: { a: 0, b: 0 },
    },
    steps: [
      acquireA(200, "live"),
      acquireA(200, "live"),
      { kind: "advance", ms: 1 },
      acquireA(200, "live"),
      { kind: "advance", ms: 1 },
      { kind: "advance", ms: 1 },
      // The holder's lease is already at its request deadline (100): both renewals are capped.
      { kind: "renew", pick: 0, live: true },
      { kind: "advance", ms: 1 },
      { kind: "renew", pick: 0, live: true },
      // Crosses the lease deadline (100: #1 gets the slot), then #1's lease and #2's wait.
      { kind: "advance", ms: 196 },
      { kind: "advance", ms: 2 },
    ],
  },
  {
    title:
      "never grants a waiter that aborts while its timeout's cancel is in flight, and frees the slot",
    plan: {
      pools: {
        a: { ...POOL, queueSize: 1, queueTimeoutMs: 400, termMs: 300, requestTimeoutMs: 1000 },
        b: { ...POOL, queueSize: 1, queueTimeoutMs: 400, termMs: 300, requestTimeoutMs: 1000 },
        c: { ...POOL, queueSize: 0, queueTimeoutMs: 30_000, termMs: 300, requestTimeoutMs: 1000 },
      },
      origin: null,
      reserved: { a: 0, b: 0 },
    },
    steps: [
      acquireA(0, "none"),
      // Waits until 400; aborts at 401.
      acquireA(400, "live", 401),
      { kind: "advance", ms: 100 },
      // #0's lease now ends at 400, with the store's lease timer set after #1's wait timer: at
      // 400 the wait runs out first (a cancel goes out), then the lease is reclaimed and the
      // slot handed to #1 before that cancel is answered; the abort at 401 lands in between
      // on a store that answers a turn later.
      { kind: "renew", pick: 0, live: true },
      { kind: "advance", ms: 301 },
      // The slot must be free again: a newcomer gets it at once.
      acquireA(0, "none"),
    ],
  },
];

/**
 * Replays the fixed counterexamples in {@link REGRESSIONS} against a store, with the same
 * model and invariants as {@link describeGovernorProperties}.
 *
 * @example
 * ```ts
 * describeGovernorRegressions("memory", memoryHarness);
 * ```
 */
export function describeGovernorRegressions(
  name: string,
  makeHarness: () => Promise<StoreHarness>,
): void {
  describe(`governor regressions: ${name}`, () => {
    for (const regression of REGRESSIONS) {
      it(regression.title, async () => {
        await playScenario(makeHarness, regression.plan, regression.steps);
      });
    }
  });
}
