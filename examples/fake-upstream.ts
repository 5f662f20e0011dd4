import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** How the fake upstream behaves. */
export interface FakeUpstreamOptions {
  /** Requests it serves at once; more are answered 429 at once. */
  concurrency: number;
  /** Requests per minute it reports in its rate headers (a window that never runs out here). */
  rpm?: number;
  /** Service time of a successful request: uniform in [min, max] ms. */
  serviceMs?: { min: number; max: number };
}

/** What the fake upstream saw. */
export interface FakeUpstreamStats {
  ok: number;
  throttled: number;
  /** Most requests in progress at once, the ones it turned away included. */
  peakInFlight: number;
}

/** A running fake upstream. */
export interface FakeUpstream {
  /** Base URL, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly stats: FakeUpstreamStats;
  /** Stops listening and drops kept-alive connections, so the process can exit. */
  close(): Promise<void>;
}

/**
 * A local HTTP API with a concurrency limit it does not announce: beyond it, it answers 429
 * with `retry-after` (seconds), `retry-after-ms`, and OpenAI-style
 * `x-ratelimit-{limit,remaining,reset}-requests`, like a real LLM API under load. Successes
 * carry the rate headers too. Listens on 127.0.0.1, on a free port.
 *
 * @example
 * ```ts
 * const upstream = await startFakeUpstream({ concurrency: 5 });
 * const response = await fetch(`${upstream.url}/v1/echo`);
 * await upstream.close();
 * ```
 */
export async function startFakeUpstream(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const rpm = options.rpm ?? 3_000;
  const serviceMs = options.serviceMs ?? { min: 40, max: 80 };
  const stats: FakeUpstreamStats = { ok: 0, throttled: 0, peakInFlight: 0 };
  /** Every request in progress, turned-away ones included (for the stats). */
  let inFlight = 0;
  /** Requests being served: what the concurrency limit counts. */
  let serving = 0;
  let served = 0;
  let windowStart = Date.now();

  const server = createServer((request, response) => {
    inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, inFlight);
    response.on("close", () => inFlight--);
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      served = 0;
    }
    const rateHeaders = {
      "x-ratelimit-limit-requests": String(rpm),
      "x-ratelimit-remaining-requests": String(Math.max(0, rpm - served)),
      "x-ratelimit-reset-requests": `${Math.ceil((windowStart + 60_000 - now) / 1000)}s`,
    };
    if (serving >= options.concurrency) {
      stats.throttled++;
      response.writeHead(429, {
        ...rateHeaders,
        "content-type": "application/json",
        "retry-after": "1",
        "retry-after-ms": "50",
      });
      response.end(JSON.stringify({ error: "too many concurrent requests" }));
      return;
    }
    served++;
    serving++;
    const delay = serviceMs.min + Math.random() * (serviceMs.max - serviceMs.min);
    setTimeout(() => {
      serving--;
      stats.ok++;
      response.writeHead(200, { ...rateHeaders, "content-type": "application/json" });
      response.end(JSON.stringify({ echo: request.url }));
    }, delay);
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
