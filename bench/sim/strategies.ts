import pLimit from "p-limit";
import type { Clock, Governor } from "../../src/index.js";
import { createGovernor, RejectedError, SluiceError } from "../../src/index.js";
import type { SimulatedUpstream, UpstreamAnswer } from "./upstream.js";

/** A clock callers can also sleep on: the simulation's, or real time. */
export interface BenchClock extends Clock {
  sleep(ms: number): Promise<void>;
}

/** What every strategy's callers share. */
export interface CallerContext {
  clock: BenchClock;
  /** The upstream itself (an oracle reads its limits; others only call it). */
  upstream: SimulatedUpstream;
  /** One call to the upstream: in process, or over HTTP. */
  call(): Promise<UpstreamAnswer>;
  /** The upstream's address when it is served over HTTP: Sluice then calls it with `governor.fetch`. */
  url?: string;
  /** Callers that always want to make another call. */
  callers: number;
  /** The configured ceiling of the fixed limit and of Sluice's pool. */
  maxConcurrent: number;
  /** False once the simulated period is over: callers stop at their next step. */
  running(): boolean;
}

/** A way of calling the upstream, run by every caller in a loop. */
export interface Strategy {
  readonly name: string;
  /**
   * Starts the callers. Call `finish` once the clock has stopped: callers still waiting on
   * the upstream are abandoned (their answers would come after the measured period).
   */
  start(context: CallerContext): StartedStrategy;
}

/** A running strategy. */
export interface StartedStrategy {
  finish(): Promise<StrategyNotes>;
  /** The concurrency it admits now (sampled to time its adaptation), when it has one. */
  limitNow?(): Promise<number>;
}

/** What a strategy reports about itself at the end (Sluice: what it learned). */
export interface StrategyNotes {
  learnedConcurrency?: number | null;
  learnedRpm?: number | null;
}

/** The retry hint a well-behaved client reads from a 429: `retry-after-ms`, else `retry-after`. */
function retryHintMs(answer: UpstreamAnswer): number {
  const millis = Number(answer.headers["retry-after-ms"]);
  if (Number.isFinite(millis) && millis >= 0) return millis;
  const seconds = Number(answer.headers["retry-after"]);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000;
}

/** Starts the caller loops; `check` rethrows the first error any of them hit. */
function startCallers(
  context: CallerContext,
  loop: () => Promise<void>,
): { check(): StrategyNotes } {
  let failure: { error: unknown } | undefined;
  for (let caller = 0; caller < context.callers; caller++) {
    loop().catch((error: unknown) => {
      failure ??= { error };
    });
  }
  return {
    check() {
      if (failure) throw failure.error;
      return {};
    },
  };
}

/**
 * No governor: every caller fires at once and, after a 429, waits the upstream's retry hint
 * before trying again.
 *
 * @example
 * ```ts
 * const { finish } = noGovernor.start(context);
 * ```
 */
export const noGovernor: Strategy = {
  name: "no governor",
  start(context) {
    const { clock } = context;
    const callers = startCallers(context, async () => {
      while (context.running()) {
        const answer = await context.call();
        if (answer.status === 429) await clock.sleep(retryHintMs(answer));
      }
    });
    return { finish: async () => callers.check() };
  },
};

/**
 * A fixed cap (p-limit) at the configured `maxConcurrent`, without learning: each attempt
 * takes a place; after a 429 the caller waits the retry hint outside the cap.
 *
 * @example
 * ```ts
 * const { finish } = fixedLimit.start(context);
 * ```
 */
export const fixedLimit: Strategy = {
  name: "fixed limit",
  start(context) {
    const { clock } = context;
    const limit = pLimit(context.maxConcurrent);
    const callers = startCallers(context, async () => {
      while (context.running()) {
        const answer = await limit(() => context.call());
        if (answer.status === 429) await clock.sleep(retryHintMs(answer));
      }
    });
    return { finish: async () => callers.check() };
  },
};

const POOL = "upstream";
/** Callers wait as long as it takes: the backlog never gives up. */
const WAIT_MS = 600_000;

/**
 * Sluice learning: a pool at `maxConcurrent` with adaptive limits; each caller acquires,
 * calls, and releases with the response's status and headers, from which the governor
 * learns the concurrency limit, the RPM and Retry-After pauses. Callers do not sleep
 * on 429s themselves: the governor's pause holds them.
 *
 * @example
 * ```ts
 * const { finish } = sluiceLearning.start(context);
 * const { learnedConcurrency } = await finish();
 * ```
 */
export const sluiceLearning: Strategy = {
  name: "sluice learning",
  start(context) {
    const governor = createGovernor({ clock: context.clock });
    const ready = governor.definePool(POOL, {
      maxConcurrent: context.maxConcurrent,
      queue: { size: context.callers, timeoutMs: WAIT_MS },
      adaptive: true,
    });
    const callers = ready.then(() =>
      startCallers(context, () => {
        const { url } = context;
        return url === undefined
          ? governedCaller(governor, context)
          : fetchingCaller(governor, context, url);
      }),
    );
    return {
      limitNow: async () => (await governor.status(POOL)).effectiveLimit,
      async finish() {
        const status = await governor.status(POOL);
        await governor.close();
        (await callers).check();
        return { learnedConcurrency: status.learned.concurrency, learnedRpm: status.learned.rpm };
      },
    };
  },
};

async function governedCaller(governor: Governor, context: CallerContext): Promise<void> {
  const options = { waitMs: WAIT_MS };
  while (context.running()) {
    let slotId: string;
    try {
      slotId = (await governor.acquire(POOL, options)).slotId;
    } catch (error) {
      if (!context.running() || !(error instanceof SluiceError)) return;
      // Turned away (a pause longer than the wait budget): come back when told.
      if (error instanceof RejectedError) await context.clock.sleep(error.retryAfterMs);
      continue;
    }
    const answer = await context.call();
    await governor.release(POOL, slotId, { status: answer.status, headers: answer.headers });
  }
}

/** Over HTTP: `governor.fetch`, which holds the slot and learns from the response itself. */
async function fetchingCaller(
  governor: Governor,
  context: CallerContext,
  url: string,
): Promise<void> {
  const init = { waitMs: WAIT_MS };
  while (context.running()) {
    try {
      const response = await governor.fetch(POOL, url, init);
      await response.arrayBuffer();
    } catch (error) {
      if (!context.running() || !(error instanceof SluiceError)) return;
      if (error instanceof RejectedError) await context.clock.sleep(error.retryAfterMs);
    }
  }
}
