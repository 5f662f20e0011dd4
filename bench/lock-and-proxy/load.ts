import { Agent, request } from "node:http";

/** One HTTP exchange on loopback. */
export interface BenchRequest {
  port: number;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What a load run measured. */
export interface LoadResult {
  operations: number;
  seconds: number;
  perSecond: number;
  /** Latency of one operation, ms. */
  p50: number;
  p99: number;
  /** Operations whose final status was not the expected one. */
  failures: number;
}

/**
 * A keep-alive client: `concurrency` sockets, reused across requests, like a busy service
 * calling through a proxy.
 */
export function createClient(concurrency: number) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: concurrency,
    maxFreeSockets: concurrency,
  });
  const send = (options: BenchRequest): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const outgoing = request(
        {
          agent,
          host: "127.0.0.1",
          port: options.port,
          method: options.method ?? "GET",
          path: options.path,
          headers:
            options.body === undefined
              ? options.headers
              : { "content-length": String(Buffer.byteLength(options.body)), ...options.headers },
        },
        (incoming) => {
          let body = "";
          incoming.setEncoding("utf8");
          incoming.on("data", (chunk: string) => {
            body += chunk;
          });
          incoming.once("end", () => resolve({ status: incoming.statusCode ?? 0, body }));
          incoming.once("error", reject);
        },
      );
      outgoing.once("error", reject);
      outgoing.end(options.body);
    });
  return { send, close: () => agent.destroy() };
}

/**
 * Runs `operations` calls of `operation` with `concurrency` in flight at once and measures
 * the rate and the latency percentiles. An operation returns false when it failed.
 */
export async function runLoad(
  operations: number,
  concurrency: number,
  operation: () => Promise<boolean>,
): Promise<LoadResult> {
  const latencies = new Float64Array(operations);
  let next = 0;
  let failures = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= operations) return;
      const startedAt = performance.now();
      const ok = await operation().catch(() => false);
      latencies[index] = performance.now() - startedAt;
      if (!ok) failures++;
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - startedAt) / 1000;
  latencies.sort();
  return {
    operations,
    seconds,
    perSecond: operations / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    failures,
  };
}

function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] as number;
}
