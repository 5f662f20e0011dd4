/**
 * `npm run bench:redis`: Redis-backed acquire+release pairs per second, Sluice's Redis store
 * (through `createGovernor`, as users call it) against the npm package redis-semaphore, on the
 * same Redis with the same limit and the same number of concurrent workers. Rounds alternate
 * between the two; medians and their ratio are printed, with Redis round trips per acquire.
 *
 *   npm run bench:redis
 *   npm run bench:redis -- --limit 8 --workers 32 --round-ms 2000 --rounds 5
 *   REDIS_URL=redis://10.0.0.5:6379 npm run bench:redis
 *
 * Each worker loops: acquire (waiting while the limit is reached), hold the slot `hold` ms
 * (0: release at once; the raw cost of a pair), release, again. Scenarios: as many workers as
 * slots (nobody waits), four workers per slot, and four per slot holding 2 ms (a slot guarding
 * real work, where how fast a freed slot reaches a waiter matters). Sluice
 * waiters sit in its Redis FIFO queue and are handed a slot by the release that frees it;
 * redis-semaphore retries its acquire script every `retryInterval` ms (its default, 10 ms).
 * Both run on one command connection. Round trips: Sluice counts its own (`stats()`), and
 * redis-semaphore's client is wrapped to count every command it sends. The column is every
 * command sent (acquires and releases) divided by the acquires: Sluice coalesces the calls
 * one process makes while its previous call is in flight into one script call, so one command
 * may carry several acquires and releases (it counts once); redis-semaphore sends at least one
 * command to acquire and one to release. A lone Sluice acquire, with nothing else in flight, is
 * shown on its own: one command.
 */

import { randomUUID } from "node:crypto";
import { cpus } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { Semaphore } from "redis-semaphore";
import {
  createRedisSlotStore,
  deleteKeysUnder,
  type RedisSlotStore,
} from "../adapters/redis/index.js";
import { createGovernor } from "../src/governor/create-governor.js";
import type { Governor } from "../src/governor/types.js";
import { formatCount, formatTable, median } from "./report.js";

const { values } = parseArgs({
  options: {
    limit: { type: "string", default: "8" },
    workers: { type: "string", default: "" },
    "hold-ms": { type: "string", default: "" },
    "round-ms": { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
  },
});

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const LIMIT = positiveInteger(values.limit, "limit");
const ROUND_MS = positiveInteger(values["round-ms"], "round-ms");
const ROUNDS = positiveInteger(values.rounds, "rounds");
/** Workers and hold time of each scenario (flags pick one scenario). */
const SCENARIOS: readonly { workers: number; holdMs: number }[] =
  values.workers || values["hold-ms"]
    ? [
        {
          workers: values.workers ? positiveInteger(values.workers, "workers") : LIMIT * 4,
          holdMs: values["hold-ms"] ? positiveInteger(values["hold-ms"], "hold-ms") : 0,
        },
      ]
    : [
        { workers: LIMIT, holdMs: 0 },
        { workers: LIMIT * 4, holdMs: 0 },
        { workers: LIMIT * 4, holdMs: 2 },
      ];
const RUN_ID = randomUUID().slice(0, 8);

/** What one round of one contender did. */
interface RoundResult {
  pairs: number;
  elapsedMs: number;
  roundTrips: number;
  /** Most slots held at once, as the workers saw it (must never pass the limit). */
  maxHeld: number;
}

/** A contender: `pair()` acquires one slot, waiting as long as needed, and releases it. */
interface Contender {
  name: string;
  pair(held: { now: number; max: number }, holdMs: number): Promise<void>;
  roundTrips(): number;
}

async function runRound(
  contender: Contender,
  workers: number,
  holdMs: number,
): Promise<RoundResult> {
  const held = { now: 0, max: 0 };
  const tripsBefore = contender.roundTrips();
  const startedAt = performance.now();
  const until = startedAt + ROUND_MS;
  let pairs = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < until) {
        await contender.pair(held, holdMs);
        pairs++;
      }
    }),
  );
  return {
    pairs,
    elapsedMs: performance.now() - startedAt,
    roundTrips: contender.roundTrips() - tripsBefore,
    maxHeld: held.max,
  };
}

/** Holds a granted slot `holdMs` (counted as held meanwhile), up to the release. */
async function hold(held: { now: number; max: number }, holdMs: number): Promise<void> {
  held.now++;
  held.max = Math.max(held.max, held.now);
  if (holdMs > 0) await sleep(holdMs);
  held.now--;
}

async function sluiceContender(workers: number) {
  const prefix = `sluice-bench:${RUN_ID}:`;
  const store: RedisSlotStore = createRedisSlotStore({ url: REDIS_URL, prefix });
  await store.ready();
  const governor: Governor = createGovernor({ store });
  const pool = `bench-${workers}`;
  await governor.definePool(pool, {
    maxConcurrent: LIMIT,
    queue: { size: workers, timeoutMs: 60_000 },
  });
  // One acquire alone, to show its cost without any waiting.
  const before = store.stats().roundTrips;
  const lone = await governor.acquire(pool);
  const loneAcquireTrips = store.stats().roundTrips - before;
  await governor.release(pool, lone.slotId);
  const contender: Contender = {
    name: "sluice (Redis store)",
    async pair(held, holdMs) {
      const grant = await governor.acquire(pool, { waitMs: 60_000 });
      await hold(held, holdMs);
      await governor.release(pool, grant.slotId);
    },
    roundTrips: () => store.stats().roundTrips,
  };
  return {
    contender,
    loneAcquireTrips,
    scripting: store.stats().scripting,
    close: async () => {
      await governor.close();
      await deleteKeysUnder(prefix, REDIS_URL);
    },
  };
}

async function redisSemaphoreContender(workers: number) {
  const client = new Redis(REDIS_URL);
  let commands = 0;
  // redis-semaphore sends eval/evalsha (acquire), zrem (release), and get/set for mutexes.
  const counted = {
    options: client.options,
    eval: (...args: Parameters<Redis["eval"]>) => {
      commands++;
      return client.eval(...args);
    },
    evalsha: (...args: Parameters<Redis["evalsha"]>) => {
      commands++;
      return client.evalsha(...args);
    },
    zrem: (...args: Parameters<Redis["zrem"]>) => {
      commands++;
      return client.zrem(...args);
    },
    get: (...args: Parameters<Redis["get"]>) => {
      commands++;
      return client.get(...args);
    },
    set: (...args: Parameters<Redis["set"]>) => {
      commands++;
      return client.set(...args);
    },
  } as unknown as Redis;
  const key = `redis-semaphore-bench:${RUN_ID}:${workers}`;
  const contender: Contender = {
    name: "redis-semaphore",
    async pair(held, holdMs) {
      const semaphore = new Semaphore(counted, key, LIMIT, {
        lockTimeout: 60_000,
        acquireTimeout: 60_000,
        refreshInterval: 0,
      });
      await semaphore.acquire();
      await hold(held, holdMs);
      await semaphore.release();
    },
    roundTrips: () => commands,
  };
  return {
    contender,
    close: async () => {
      await client.del(key);
      client.disconnect();
    },
  };
}

async function scenario(workers: number, holdMs: number): Promise<number> {
  const sluice = await sluiceContender(workers);
  const other = await redisSemaphoreContender(workers);
  const results = new Map<string, RoundResult[]>([
    [sluice.contender.name, []],
    [other.contender.name, []],
  ]);
  try {
    // Warm-up: scripts loaded, connections open, JIT settled.
    for (const contender of [sluice.contender, other.contender]) {
      await runRound(contender, workers, holdMs);
    }
    for (let round = 0; round < ROUNDS; round++) {
      const order =
        round % 2 === 0 ? [sluice.contender, other.contender] : [other.contender, sluice.contender];
      for (const contender of order) {
        results.get(contender.name)!.push(await runRound(contender, workers, holdMs));
      }
    }
  } finally {
    await sluice.close();
    await other.close();
  }

  const rows = [...results].map(([name, rounds]) => {
    const rates = rounds.map((r) => (r.pairs * 1000) / r.elapsedMs);
    const pairs = rounds.reduce((sum, r) => sum + r.pairs, 0);
    const trips = rounds.reduce((sum, r) => sum + r.roundTrips, 0);
    // Every command sent (acquires and releases, possibly several in one) per acquire.
    return {
      name,
      rate: median(rates),
      perAcquire: trips / pairs,
      maxHeld: Math.max(...rounds.map((r) => r.maxHeld)),
      spread: `${formatCount(Math.min(...rates))}–${formatCount(Math.max(...rates))}`,
    };
  });
  const sluiceRate = rows[0]!.rate;
  console.log(
    `\n## limit ${LIMIT}, ${workers} workers, ${holdMs > 0 ? `each holds its slot ${holdMs} ms` : "release at once"}\n`,
  );
  console.log(
    formatTable(
      ["contender", "pairs/s (median)", "range", "commands / acquire", "max held", "vs sluice"],
      rows.map((row) => [
        row.name,
        formatCount(row.rate),
        row.spread,
        row.perAcquire.toFixed(2),
        holdMs > 0 ? `${row.maxHeld}/${LIMIT}` : "-",
        `${(row.rate / sluiceRate).toFixed(2)}×`,
      ]),
      ["left", "right", "right", "right", "right", "right"],
    ),
  );
  const ratio = sluiceRate / rows[1]!.rate;
  console.log(
    `\nsluice / redis-semaphore: ${ratio.toFixed(2)}× (target ≥ ${targetFor(holdMs)}×) · ` +
      `a lone sluice acquire took ${sluice.loneAcquireTrips} round trip(s) · ` +
      `scripts run as ${sluice.scripting === "functions" ? "Redis Functions (FCALL)" : "EVALSHA"}`,
  );
  for (const row of rows) {
    if (row.maxHeld > LIMIT) console.log(`!!! ${row.name} held ${row.maxHeld} > ${LIMIT} slots`);
  }
  return ratio;
}

/**
 * The targets of issue 19: at least even without holding, and 1.35× with a 2 ms hold (8 slots ÷
 * 2 ms caps any limiter near 1.44× of redis-semaphore's figure here).
 */
function targetFor(holdMs: number): number {
  return holdMs > 0 ? 1.35 : 1.0;
}

function positiveInteger(text: string | undefined, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} must be a whole number ≥ 1, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

console.log(
  `Sluice Redis bench · node ${process.version} · ${cpus().length} CPU(s) · ${REDIS_URL} · ` +
    `${new Date().toISOString()}`,
);
console.log(
  `Acquire+release pairs per second, ${ROUNDS} interleaved rounds of ${ROUND_MS} ms per contender ` +
    "(after one warm-up round each); commands / acquire = every command sent to Redis " +
    "(releases included) per acquire.",
);
const ratios: string[] = [];
for (const { workers, holdMs } of SCENARIOS) {
  const ratio = await scenario(workers, holdMs);
  ratios.push(
    `${workers} workers, hold ${holdMs} ms: ${ratio.toFixed(2)}× (target ≥ ${targetFor(holdMs)}×)`,
  );
}
console.log(`\n## Summary (sluice / redis-semaphore pairs/s)\n${ratios.join("\n")}`);
