/**
 * Lock API and pool proxy benchmark, on loopback, every contender in its own process:
 *
 * 1. Lock API acquire+release pairs per second against the ceiling of a no-op Hono endpoint
 *    called the same way (two POSTs per pair). Target ≥ 0.8×.
 * 2. Proxy requests per second and latency (p50, p99) against the direct upstream and
 *    against HAProxy (`maxconn` = the pool limit, with a queue). Target: ≥ 0.75× HAProxy's
 *    throughput. Run once with an instant origin (pure proxy overhead; a bare Node
 *    pass-through proxy is shown as the platform's floor) and once with a 5 ms origin and
 *    more callers than slots (queueing).
 *
 * Usage: `npx tsx bench/lock-and-proxy/run.ts` (BENCH_SCALE=0.2 for a quick run).
 * Not a test: it prints numbers, it does not assert them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { formatCount, formatRatio, formatTable, median } from "../report.js";
import { type HaproxyRun, haproxyAvailable, startHaproxy } from "./haproxy.js";
import { createClient, type LoadResult, runLoad } from "./load.js";

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const ROUNDS = 3;
const LIMIT = 16;
const LOCK_PAIRS = Math.round(8_000 * SCALE);
const FAST_REQUESTS = Math.round(16_000 * SCALE);
const SLOW_REQUESTS = Math.round(6_000 * SCALE);
const SLOW_ORIGIN_MS = 5;
const HERE = dirname(fileURLToPath(import.meta.url));
const LOCK_HOST = "lock.bench";
const POOL_HOST = "proxied.pools.bench";
const SLOW_POOL_HOST = "slow.pools.bench";

const children: ChildProcess[] = [];
// Whatever happens, no contender outlives the benchmark.
process.once("exit", () => {
  for (const child of children) child.kill("SIGTERM");
});

/** Starts `servers.ts <args>` in a child process and waits for its READY line. */
async function startChild(...args: string[]): Promise<Record<string, unknown> & { port: number }> {
  // Resolved here so the benchmark runs from any working directory.
  const tsx = import.meta.resolve("tsx");
  const child = spawn(process.execPath, ["--import", tsx, join(HERE, "servers.ts"), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    if (line.startsWith("READY ")) return JSON.parse(line.slice(6));
  }
  throw new Error(`servers.ts ${args.join(" ")} exited before it was ready`);
}

/** Runs a measured operation ROUNDS times after a warm-up; keeps the median round. */
async function measure(operations: number, concurrency: number, operation: () => Promise<boolean>) {
  await runLoad(Math.max(200, Math.round(operations / 4)), concurrency, operation);
  const rounds: LoadResult[] = [];
  for (let round = 0; round < ROUNDS; round++)
    rounds.push(await runLoad(operations, concurrency, operation));
  const rate = median(rounds.map((result) => result.perSecond));
  return rounds.find((result) => result.perSecond === rate) ?? (rounds[0] as LoadResult);
}

function ms(value: number): string {
  return value.toFixed(2);
}

async function lockSection(noopPort: number, sluicePort: number, lockKey: string): Promise<void> {
  const concurrency = 32;
  const client = createClient(concurrency);
  const noopBody = '{"waitMs":0}';
  const noop = await measure(LOCK_PAIRS, concurrency, async () => {
    const first = await client.send({
      port: noopPort,
      method: "POST",
      path: "/noop",
      body: noopBody,
    });
    const second = await client.send({
      port: noopPort,
      method: "POST",
      path: "/noop",
      body: noopBody,
    });
    return first.status === 200 && second.status === 200;
  });
  const headers = { host: LOCK_HOST, "x-svc-key": lockKey };
  const lock = await measure(LOCK_PAIRS, concurrency, async () => {
    const acquired = await client.send({
      port: sluicePort,
      method: "POST",
      path: "/pools/locks/lock/acquire",
      headers,
      body: noopBody,
    });
    if (acquired.status !== 200) return false;
    const { slotId } = JSON.parse(acquired.body) as { slotId: string };
    const released = await client.send({
      port: sluicePort,
      method: "POST",
      path: `/pools/locks/lock/${slotId}/release`,
      headers,
      body: '{"status":200}',
    });
    return released.status === 200;
  });
  client.close();
  console.log(
    `\nLock API: acquire+release pairs, ${concurrency} callers, ${formatCount(LOCK_PAIRS)} pairs, median of ${ROUNDS}`,
  );
  console.log(
    formatTable(
      ["contender", "pairs/s", "p50 ms", "p99 ms", "failed", "vs no-op"],
      [
        [
          "no-op Hono endpoint (2 POSTs)",
          formatCount(noop.perSecond),
          ms(noop.p50),
          ms(noop.p99),
          String(noop.failures),
          formatRatio(1),
        ],
        [
          "Lock API acquire+release",
          formatCount(lock.perSecond),
          ms(lock.p50),
          ms(lock.p99),
          String(lock.failures),
          formatRatio(lock.perSecond / noop.perSecond),
        ],
      ],
      ["left", "right", "right", "right", "right", "right"],
    ),
  );
  console.log(`Target ≥ 0.80×: ${lock.perSecond / noop.perSecond >= 0.8 ? "met" : "NOT met"}`);
}

interface ProxyContender {
  name: string;
  port: number;
  headers: Record<string, string>;
}

async function proxySection(
  title: string,
  requests: number,
  concurrency: number,
  contenders: ProxyContender[],
): Promise<void> {
  const client = createClient(concurrency);
  const results: { contender: ProxyContender; result: LoadResult }[] = [];
  for (const contender of contenders) {
    const result = await measure(requests, concurrency, async () => {
      const answer = await client.send({
        port: contender.port,
        path: "/v1/chat?bench=1",
        headers: contender.headers,
      });
      return answer.status === 200;
    });
    results.push({ contender, result });
  }
  client.close();
  const direct = results[0]?.result as LoadResult;
  const haproxy = results.find((entry) => entry.contender.name.startsWith("HAProxy"))?.result;
  console.log(`\n${title}`);
  console.log(
    formatTable(
      ["contender", "req/s", "p50 ms", "p99 ms", "+p50 ms", "+p99 ms", "failed", "vs HAProxy"],
      results.map(({ contender, result }) => [
        contender.name,
        formatCount(result.perSecond),
        ms(result.p50),
        ms(result.p99),
        ms(result.p50 - direct.p50),
        ms(result.p99 - direct.p99),
        String(result.failures),
        haproxy ? formatRatio(result.perSecond / haproxy.perSecond) : "n/a",
      ]),
      ["left", "right", "right", "right", "right", "right", "right", "right"],
    ),
  );
  const sluice = results.find((entry) => entry.contender.name.startsWith("Sluice"))?.result;
  if (haproxy && sluice) {
    console.log(
      `Target ≥ 0.75× HAProxy's throughput: ${sluice.perSecond / haproxy.perSecond >= 0.75 ? "met" : "NOT met"}`,
    );
  }
}

async function startHaproxyIfPossible(
  fastPort: number,
  slowPort: number,
): Promise<HaproxyRun | null> {
  if (!haproxyAvailable()) {
    console.log(
      "\nHAProxy is not installed (Debian: apt-get install -y haproxy): its rows are skipped.",
    );
    return null;
  }
  try {
    return await startHaproxy({
      fast: { upstreamPort: fastPort, limit: LIMIT },
      slow: { upstreamPort: slowPort, limit: LIMIT },
    });
  } catch (error) {
    console.log(`\nHAProxy could not start (${(error as Error).message}): its rows are skipped.`);
    return null;
  }
}

async function main(): Promise<void> {
  console.log(`Lock API and pool proxy benchmark (loopback, ${LIMIT} slots, scale ${SCALE})`);
  const noop = await startChild("noop");
  const fast = await startChild("upstream", "0");
  const slow = await startChild("upstream", String(SLOW_ORIGIN_MS));
  const sluice = await startChild("sluice", String(fast.port), String(slow.port), String(LIMIT));
  const nodeProxy = await startChild("nodeproxy", String(fast.port));
  let haproxy: HaproxyRun | null = null;
  try {
    haproxy = await startHaproxyIfPossible(fast.port, slow.port);
    const keys = sluice.keys as Record<string, string>;
    await lockSection(noop.port, sluice.port, keys.locks as string);
    const wait = { "x-svc-queue-timeout-ms": "30000" };
    const fastContenders: ProxyContender[] = [
      { name: "direct upstream", port: fast.port, headers: {} },
      ...(haproxy
        ? [{ name: "HAProxy (maxconn + queue)", port: haproxy.ports.fast as number, headers: {} }]
        : []),
      { name: "bare Node proxy (no limit)", port: nodeProxy.port, headers: {} },
      {
        name: "Sluice proxy",
        port: sluice.port,
        headers: { host: POOL_HOST, "x-svc-key": keys.proxied as string, ...wait },
      },
    ];
    await proxySection(
      `Proxy, instant origin: ${LIMIT} callers (no queueing), ${formatCount(FAST_REQUESTS)} requests, median of ${ROUNDS}`,
      FAST_REQUESTS,
      LIMIT,
      fastContenders,
    );
    const slowContenders: ProxyContender[] = [
      { name: "direct upstream (no limit)", port: slow.port, headers: {} },
      ...(haproxy
        ? [{ name: "HAProxy (maxconn + queue)", port: haproxy.ports.slow as number, headers: {} }]
        : []),
      {
        name: "Sluice proxy",
        port: sluice.port,
        headers: { host: SLOW_POOL_HOST, "x-svc-key": keys.slow as string, ...wait },
      },
    ];
    await proxySection(
      `Proxy, ${SLOW_ORIGIN_MS} ms origin: ${LIMIT * 4} callers for ${LIMIT} slots (queueing), ${formatCount(SLOW_REQUESTS)} requests, median of ${ROUNDS}`,
      SLOW_REQUESTS,
      LIMIT * 4,
      slowContenders,
    );
  } finally {
    haproxy?.stop();
    for (const child of children) child.kill("SIGTERM");
  }
}

await main();
