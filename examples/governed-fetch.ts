/**
 * Governs real `fetch` calls to a local fake upstream: `npm run example`.
 *
 * The upstream serves 5 requests at once and answers 429 beyond that, but does not say so.
 * The pool allows 10, so the first burst overshoots; the governor reads the 429s' headers
 * as the slots are released, lowers the pool's limit, and the retries then go through
 * without crowding the upstream again.
 *
 * It imports `sluice` as an app of yours would: inside this repository the name resolves to the
 * package's own build (`dist/`: `npm run example` builds it first; run `npm run build` before
 * `npx tsx examples/governed-fetch.ts`, which does not).
 */

import { pathToFileURL } from "node:url";
import type { Governor } from "sluice";
import { createGovernor } from "sluice";
import { startFakeUpstream } from "./fake-upstream.js";

const POOL = "upstream";

/** Settings of one run of the example. */
export interface ExampleOptions {
  /** Calls fired at once. */
  calls?: number;
  /** The upstream's hidden concurrency limit. */
  upstreamConcurrency?: number;
  /** The pool's configured ceiling (deliberately above the upstream's limit). */
  maxConcurrent?: number;
  /** Attempts per call before giving up on 429s. */
  maxAttempts?: number;
}

/** What happened, for printing or asserting. */
export interface ExampleSummary {
  calls: number;
  /** Calls that ended with a 2xx. */
  ok: number;
  /** Calls that gave up (still 429 after `maxAttempts`, or a network error). */
  failed: number;
  /** 429 answers seen along the way (each was retried). */
  throttled: number;
  /** Most requests the upstream had in progress at once. */
  peakInFlight: number;
  upstreamConcurrency: number;
  maxConcurrent: number;
  /** The pool's learned concurrency limit (null: nothing learned, the configured max applies). */
  learnedConcurrency: number | null;
  effectiveLimit: number;
  elapsedMs: number;
}

/**
 * Starts the fake upstream, fires `calls` governed fetches at once (each waits up to 10 s
 * for a slot, and retries a 429 through the governor), and reports what the upstream saw
 * and what the pool learned. Cleans up after itself.
 *
 * @example
 * ```ts
 * const summary = await main({ calls: 50 });
 * console.log(formatSummary(summary));
 * ```
 */
export async function main(options: ExampleOptions = {}): Promise<ExampleSummary> {
  const calls = options.calls ?? 50;
  const upstreamConcurrency = options.upstreamConcurrency ?? 5;
  const maxConcurrent = options.maxConcurrent ?? 10;
  const maxAttempts = options.maxAttempts ?? 5;
  const upstream = await startFakeUpstream({ concurrency: upstreamConcurrency });
  const governor = createGovernor();
  const startedAt = performance.now();
  try {
    await governor.definePool(POOL, {
      maxConcurrent,
      queue: { size: calls, timeoutMs: 10_000 },
    });
    const outcomes = await Promise.all(
      Array.from({ length: calls }, (_, index) =>
        callWithRetries(governor, `${upstream.url}/v1/items/${index}`, maxAttempts),
      ),
    );
    const status = await governor.status(POOL);
    return {
      calls,
      ok: outcomes.filter((outcome) => outcome.ok).length,
      failed: outcomes.filter((outcome) => !outcome.ok).length,
      throttled: outcomes.reduce((sum, outcome) => sum + outcome.throttled, 0),
      peakInFlight: upstream.stats.peakInFlight,
      upstreamConcurrency,
      maxConcurrent,
      learnedConcurrency: status.learned.concurrency,
      effectiveLimit: status.effectiveLimit,
      elapsedMs: performance.now() - startedAt,
    };
  } finally {
    await governor.close();
    await upstream.close();
  }
}

/** One caller: a governed fetch, retried through the governor while the answer is 429. */
async function callWithRetries(
  governor: Governor,
  url: string,
  maxAttempts: number,
): Promise<{ ok: boolean; throttled: number }> {
  let throttled = 0;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    try {
      const response = await governor.fetch(POOL, url, { waitMs: 10_000 });
      // The slot is held until the body is read; then it is released with the answer.
      await response.text();
      if (response.status !== 429) return { ok: response.ok, throttled };
      throttled++;
    } catch {
      return { ok: false, throttled };
    }
  }
  return { ok: false, throttled };
}

/**
 * The summary as a few readable lines.
 *
 * @example
 * ```ts
 * console.log(formatSummary(await main()));
 * ```
 */
export function formatSummary(summary: ExampleSummary): string {
  const learned =
    summary.learnedConcurrency === null
      ? "nothing (the configured max applies)"
      : String(summary.learnedConcurrency);
  return [
    `${summary.calls} governed fetch calls to a fake upstream that serves ${summary.upstreamConcurrency} at once (pool maxConcurrent ${summary.maxConcurrent})`,
    `  ok:                         ${summary.ok}`,
    `  failed:                     ${summary.failed}`,
    `  429 answers (retried):      ${summary.throttled}`,
    `  peak in flight at upstream: ${summary.peakInFlight} (${peakVerdict(summary.peakInFlight, summary.maxConcurrent)} maxConcurrent ${summary.maxConcurrent}; 429s count while in flight)`,
    `  learned concurrency limit:  ${learned}; effective limit ${summary.effectiveLimit}`,
    `  elapsed:                    ${(summary.elapsedMs / 1000).toFixed(2)} s`,
  ].join("\n");
}

/** What the measured peak says about the limit (it is measured, not assumed). */
function peakVerdict(peak: number, limit: number): string {
  return peak <= limit ? "within" : "ABOVE, which is a bug:";
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (summary) => console.log(formatSummary(summary)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
