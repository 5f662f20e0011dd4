import type { Strategy } from "./strategies.js";

/**
 * The yardstick: a semaphore that knows the upstream's limits at every instant (its
 * concurrency, also after it changes, and a quota window's calls left and end). It never
 * learns and never probes, so its goodput is the most any client could get.
 *
 * @example
 * ```ts
 * const { finish } = oracleSemaphore.start(context);
 * ```
 */
export const oracleSemaphore: Strategy = {
  name: "oracle semaphore",
  start(context) {
    const { clock, upstream } = context;
    const waiting: (() => void)[] = [];
    let inFlight = 0;
    let sentInWindow = 0;
    let windowEndsAt = Number.NEGATIVE_INFINITY;
    let windowTimer = false;
    const wakeAll = () => {
      for (const wake of waiting.splice(0)) wake();
    };
    const changeAt = upstream.changeAt;
    if (changeAt !== null) clock.setTimeout(wakeAll, changeAt - clock.now());

    /** Calls the quota still allows now (the oracle counts its own sends). */
    const quotaAllows = (): boolean => {
      const now = clock.now();
      if (now >= windowEndsAt) {
        windowEndsAt = now + upstream.msUntilQuota();
        sentInWindow = 0;
      }
      if (sentInWindow < upstream.limits.rpm) return true;
      if (!windowTimer) {
        windowTimer = true;
        clock.setTimeout(() => {
          windowTimer = false;
          wakeAll();
        }, windowEndsAt - now);
      }
      return false;
    };
    const admit = async (): Promise<void> => {
      while (inFlight >= upstream.concurrencyNow() || !quotaAllows()) {
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      inFlight += 1;
      sentInWindow += 1;
    };

    let failure: { error: unknown } | undefined;
    const loop = async () => {
      while (context.running()) {
        await admit();
        if (!context.running()) {
          inFlight -= 1;
          return;
        }
        const answer = await context.call().finally(() => {
          inFlight -= 1;
          waiting.shift()?.();
        });
        if (answer.status === 429)
          await clock.sleep(Number(answer.headers["retry-after-ms"] ?? 1000));
      }
    };
    for (let caller = 0; caller < context.callers; caller++) {
      loop().catch((error: unknown) => {
        failure ??= { error };
      });
    }
    return {
      limitNow: async () => upstream.concurrencyNow(),
      async finish() {
        wakeAll();
        if (failure) throw failure.error;
        return {};
      },
    };
  },
};
