/**
 * Lock API and pool proxy benchmark, on loopback, every contender in its own process:
 *
 * 1. Lock API acquire+release pairs per second against the ceiling of a no-op Hono endpoint
 *    called the same way (two POSTs per pair). Target ≥ 0.90×.
 * 2. Proxy requests per second and latency (p50, p99), once with an instant origin (pure
 *    proxy overhead) and once with a 5 ms origin and more callers than slots (queueing).
 *    With an instant origin Sluice is measured against the bare undici pass-through (the
 *    floor of a Node proxy calling origins the way Sluice does): target ≥ 0.90× its req/s and
 *    ≤ 1.20× its server CPU per request. With the 5 ms origin against HAProxy (`maxconn` =
 *    the pool limit, with a queue): target ≥ 0.90× its req/s and an added p99 (over the
 *    direct upstream's) ≤ 1.5× HAProxy's.
 *
 * Usage: `npm run bench:http` (or `npx tsx bench/lock-and-proxy/run.ts`). Environment:
 * BENCH_SCALE=0.2 for a quick run; BENCH_PART=lock, proxy (both proxy sections), fast or
 * slow (one proxy section) for part of it;
 * BENCH_CPU_PROF=<dir> writes V8 CPU profiles of the Node contenders there, one folder per
 * role (open them in Chrome DevTools or speedscope); BENCH_RUNTIME=tsx runs the contenders
 * under tsx instead of from a build.
 * The Node contenders run from a tsup build of `servers.ts` (the way `sluice serve` runs from
 * `dist/`), not under tsx: tsx compiles with `keepNames`, which wraps every function created
 * per request in a `__name` call, and turns source maps on, costs a user does not pay.
 * Not a test: it prints numbers, it does not assert them.
 */
import { formatCount, formatRatio, formatTable } from "../report.js";
import { RUNTIME, startChild, stopChildren } from "./children.js";
import { type HaproxyRun, haproxyAvailable, startHaproxy } from "./haproxy.js";
import { type Measured, measureInterleaved, pairedRatio, ROUNDS } from "./interleaved.js";
import { createClient } from "./load.js";

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const PART = process.env.BENCH_PART ?? "all";
const LIMIT = 16;
const LOCK_PAIRS = Math.round(5_000 * SCALE);
const FAST_REQUESTS = Math.round(10_000 * SCALE);
const SLOW_REQUESTS = Math.round(4_000 * SCALE);
const SLOW_ORIGIN_MS = 5;
const LOCK_HOST = "lock.bench";
const POOL_HOST = "proxied.pools.bench";
const SLOW_POOL_HOST = "slow.pools.bench";
/** The row the instant-origin targets compare Sluice with. */
const UNDICI_FLOOR = "bare proxy, undici";

function cpu(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(0);
}

function cpuRatio(value: number | null, reference: number | null | undefined): string {
  return value === null || !reference ? "n/a" : formatRatio(value / reference);
}

function met(yes: boolean): string {
  return yes ? "met" : "NOT met";
}

function ms(value: number): string {
  return value.toFixed(2);
}

async function lockSection(
  noop: { port: number; pid: number | undefined },
  sluice: { port: number; pid: number | undefined },
  lockKey: string,
): Promise<void> {
  const concurrency = 32;
  const client = createClient(concurrency);
  const noopBody = '{"waitMs":0}';
  const headers = { host: LOCK_HOST, "x-svc-key": lockKey, "content-type": "application/json" };
  const [noopRun, lock] = (await measureInterleaved(LOCK_PAIRS, concurrency, [
    {
      pid: noop.pid,
      operation: async () => {
        const first = await client.send({
          port: noop.port,
          method: "POST",
          path: "/noop",
          body: noopBody,
        });
        const second = await client.send({
          port: noop.port,
          method: "POST",
          path: "/noop",
          body: noopBody,
        });
        return first.status === 200 && second.status === 200;
      },
    },
    {
      pid: sluice.pid,
      operation: async () => {
        const acquired = await client.send({
          port: sluice.port,
          method: "POST",
          path: "/pools/locks/lock/acquire",
          headers,
          body: noopBody,
        });
        if (acquired.status !== 200) return false;
        const { slotId } = JSON.parse(acquired.body) as { slotId: string };
        const released = await client.send({
          port: sluice.port,
          method: "POST",
          path: `/pools/locks/lock/${slotId}/release`,
          headers,
          body: '{"status":200}',
        });
        return released.status === 200;
      },
    },
  ])) as [Measured, Measured];
  client.close();
  console.log(
    `\nLock API: acquire+release pairs, ${concurrency} callers, ${formatCount(LOCK_PAIRS)} pairs a round, median of ${ROUNDS} interleaved rounds (ratios: median of per-round ratios)`,
  );
  console.log(
    formatTable(
      [
        "contender",
        "pairs/s",
        "p50 ms",
        "p99 ms",
        "failed",
        "vs no-op",
        "server CPU µs/pair",
        "CPU vs no-op",
        "client CPU µs/pair",
      ],
      [
        ["no-op Hono endpoint (2 POSTs)", noopRun, noopRun],
        ["Lock API acquire+release", lock, noopRun],
      ].map(([name, run, reference]) => {
        const result = run as Measured;
        const base = reference as Measured;
        return [
          name as string,
          formatCount(result.perSecond),
          ms(result.p50),
          ms(result.p99),
          String(result.failures),
          formatRatio(pairedRatio(result, base)),
          cpu(result.cpuMicrosPerOp),
          cpuRatio(result.cpuMicrosPerOp, base.cpuMicrosPerOp),
          cpu(result.clientCpuMicrosPerOp),
        ];
      }),
      ["left", "right", "right", "right", "right", "right", "right", "right", "right"],
    ),
  );
  const ratio = pairedRatio(lock, noopRun);
  console.log(
    `Target ≥ 0.90× the no-op's pairs/s: ${met(ratio >= 0.9)} (${formatRatio(ratio)}; server CPU ${cpuRatio(lock.cpuMicrosPerOp, noopRun.cpuMicrosPerOp)})`,
  );
}

interface ProxyContender {
  name: string;
  port: number;
  /** The process answering the client (for CPU per request). */
  pid: number | undefined;
  headers: Record<string, string>;
}

async function proxySection(
  title: string,
  requests: number,
  concurrency: number,
  contenders: ProxyContender[],
): Promise<void> {
  const client = createClient(concurrency);
  const measured = await measureInterleaved(
    requests,
    concurrency,
    contenders.map((contender) => ({
      pid: contender.pid,
      operation: async () => {
        const answer = await client.send({
          port: contender.port,
          path: "/v1/chat?bench=1",
          headers: contender.headers,
        });
        return answer.status === 200;
      },
    })),
  );
  client.close();
  const results = contenders.map((contender, index) => ({
    contender,
    result: measured[index] as Measured,
  }));
  const direct = results[0]?.result as Measured;
  const haproxy = results.find((entry) => entry.contender.name.startsWith("HAProxy"))?.result;
  console.log(`\n${title}`);
  console.log(
    formatTable(
      [
        "contender",
        "req/s",
        "p50 ms",
        "p99 ms",
        "+p50 ms",
        "+p99 ms",
        "failed",
        "vs HAProxy",
        "server CPU µs/req",
        "client CPU µs/req",
      ],
      results.map(({ contender, result }) => [
        contender.name,
        formatCount(result.perSecond),
        ms(result.p50),
        ms(result.p99),
        ms(result.p50 - direct.p50),
        ms(result.p99 - direct.p99),
        String(result.failures),
        haproxy ? formatRatio(pairedRatio(result, haproxy)) : "n/a",
        cpu(result.cpuMicrosPerOp),
        cpu(result.clientCpuMicrosPerOp),
      ]),
      ["left", "right", "right", "right", "right", "right", "right", "right", "right", "right"],
    ),
  );
  const sluice = results.find((entry) => entry.contender.name.startsWith("Sluice"))?.result;
  const floor = results.find((entry) => entry.contender.name === UNDICI_FLOOR)?.result;
  if (sluice && floor) {
    const ratio = pairedRatio(sluice, floor);
    const cpuShare =
      sluice.cpuMicrosPerOp === null || !floor.cpuMicrosPerOp
        ? null
        : sluice.cpuMicrosPerOp / floor.cpuMicrosPerOp;
    console.log(
      `Target ≥ 0.90× the bare undici pass-through's req/s: ${met(ratio >= 0.9)} (${formatRatio(ratio)}); ` +
        `≤ 1.20× its server CPU per request: ${cpuShare === null ? "n/a" : met(cpuShare <= 1.2)} (${cpuRatio(sluice.cpuMicrosPerOp, floor.cpuMicrosPerOp)})`,
    );
  } else if (haproxy && sluice) {
    const ratio = pairedRatio(sluice, haproxy);
    const added = sluice.p99 - direct.p99;
    const haproxyAdded = haproxy.p99 - direct.p99;
    console.log(
      `Target ≥ 0.90× HAProxy's req/s: ${met(ratio >= 0.9)} (${formatRatio(ratio)}); ` +
        `added p99 ≤ 1.5× HAProxy's: ${met(added <= 1.5 * haproxyAdded)} (${ms(added)} vs ${ms(haproxyAdded)} ms, ${formatRatio(added / haproxyAdded)})`,
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
  console.log(
    `Lock API and pool proxy benchmark (loopback, ${LIMIT} slots, scale ${SCALE}, contenders run ${RUNTIME === "tsx" ? "under tsx" : "from a tsup build"})`,
  );
  const noop = await startChild("noop");
  const fast = await startChild("upstream", "0");
  const slow = await startChild("upstream", String(SLOW_ORIGIN_MS));
  const sluice = await startChild("sluice", String(fast.port), String(slow.port), String(LIMIT));
  const nodeProxy = await startChild("nodeproxy", String(fast.port));
  const undiciProxy = await startChild("undiciproxy", String(fast.port));
  let haproxy: HaproxyRun | null = null;
  try {
    haproxy = await startHaproxyIfPossible(fast.port, slow.port);
    const keys = sluice.keys as Record<string, string>;
    if (PART === "all" || PART === "lock") await lockSection(noop, sluice, keys.locks as string);
    if (PART === "lock") return;
    const wait = { "x-svc-queue-timeout-ms": "30000" };
    const fastContenders: ProxyContender[] = [
      { name: "direct upstream", port: fast.port, pid: fast.pid, headers: {} },
      ...(haproxy
        ? [
            {
              name: "HAProxy (maxconn + queue)",
              port: haproxy.ports.fast as number,
              pid: haproxy.pid,
              headers: {},
            },
          ]
        : []),
      { name: "bare proxy, http.request", port: nodeProxy.port, pid: nodeProxy.pid, headers: {} },
      { name: UNDICI_FLOOR, port: undiciProxy.port, pid: undiciProxy.pid, headers: {} },
      {
        name: "Sluice proxy",
        port: sluice.port,
        pid: sluice.pid,
        headers: { host: POOL_HOST, "x-svc-key": keys.proxied as string, ...wait },
      },
    ];
    if (PART !== "slow")
      await proxySection(
        `Proxy, instant origin: ${LIMIT} callers (no queueing), ${formatCount(FAST_REQUESTS)} requests a round, median of ${ROUNDS}`,
        FAST_REQUESTS,
        LIMIT,
        fastContenders,
      );
    const slowContenders: ProxyContender[] = [
      { name: "direct upstream (no limit)", port: slow.port, pid: slow.pid, headers: {} },
      ...(haproxy
        ? [
            {
              name: "HAProxy (maxconn + queue)",
              port: haproxy.ports.slow as number,
              pid: haproxy.pid,
              headers: {},
            },
          ]
        : []),
      {
        name: "Sluice proxy",
        port: sluice.port,
        pid: sluice.pid,
        headers: { host: SLOW_POOL_HOST, "x-svc-key": keys.slow as string, ...wait },
      },
    ];
    if (PART !== "fast")
      await proxySection(
        `Proxy, ${SLOW_ORIGIN_MS} ms origin: ${LIMIT * 4} callers for ${LIMIT} slots (queueing), ${formatCount(SLOW_REQUESTS)} requests a round, median of ${ROUNDS}`,
        SLOW_REQUESTS,
        LIMIT * 4,
        slowContenders,
      );
  } finally {
    haproxy?.stop();
    stopChildren();
  }
}

await main();
