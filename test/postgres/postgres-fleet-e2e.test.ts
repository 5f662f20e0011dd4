import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { heldIds, sluiceOk } from "../redis/e2e-cluster.js";
import { type Endpoint, send } from "../redis/e2e-http.js";
import { type HeldSlot, holdSlot, type LoadPlan, LoadStats, runClient } from "../redis/e2e-load.js";
import { ConcurrencyChecker } from "../redis/e2e-upstream.js";
import { REDIS_URL, requireRedis } from "../redis/redis-harness.js";
import { requirePostgres } from "../support/postgres.js";
import { postgresFleet } from "./pg-fleet.js";

const available =
  (await requirePostgres("the PostgreSQL fleet test")) &&
  (await requireRedis("the PostgreSQL fleet test"));

const POOL_DOMAIN = "pools.localhost";
const POOL = "fleet";
const LIMIT = 6;
/** A short lease, so "its slots come back within one term" is seconds (see the Redis e2e test). */
const TERM_MS = 3_000;
const RENEW_MS = 500;
const RECLAIM_MARGIN_MS = 1_500;
const CLIENTS = 120;
const LOAD_MS = 4_000;
const KILL_AT_MS = 1_500;
const WAIT_MS = 2_500;
const ORIGIN_HOLD_MS = 25;

function poolEntry(subdomain: string, origin: string) {
  return {
    name: subdomain,
    subdomain,
    origin,
    maxConcurrent: LIMIT,
    queue: { size: 400, timeoutMs: 10_000 },
    termMs: TERM_MS,
    renewIntervalMs: RENEW_MS,
    requestTimeoutMs: 30_000,
    adaptive: false,
    requireKey: false,
  };
}

describe.skipIf(!available)("three sluice serve processes on one PostgreSQL and one Redis", () => {
  const fleet = postgresFleet("pgfleet");
  const checker = new ConcurrencyChecker(ORIGIN_HOLD_MS);
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    await fleet.stop();
    await checker.stop();
    redis.disconnect();
  });

  it("serve as one: a new pool everywhere within a second, one limit under load, nothing lost on kill -9", async () => {
    const env = await fleet.env();
    await sluiceOk(
      ["team", "create", "--name", "Fleet", "--slug", "fleet"].concat([
        "--owner-name",
        "Ada",
        "--owner-email",
        "ada@fleet.test",
      ]),
      env,
    );
    const { nodes, endpoints } = await fleet.start(3);
    const [first, second, victim] = endpoints as [Endpoint, Endpoint, Endpoint];

    // A pool created while the fleet runs is served by every server within a second.
    const origin = await checker.addOrigin(POOL);
    const file = join(fleet.dir(), "fleet.json");
    writeFileSync(
      file,
      JSON.stringify({ team: "fleet", budgets: [], pools: [poolEntry(POOL, origin)] }),
    );
    await sluiceOk(["apply", file], env);
    const appliedAt = Date.now();
    const servedAfter = await Promise.all(
      endpoints.map(async (endpoint) => {
        for (;;) {
          const reply = await send(endpoint, { path: `/pools/${POOL}/lock/acquire` });
          if (reply.status === 200) {
            const { slotId } = JSON.parse(reply.body) as { slotId: string };
            await send(endpoint, { path: `/pools/${POOL}/lock/${slotId}/release` });
            return Date.now() - appliedAt;
          }
          expect(reply.status).toBe(404);
          await sleep(20);
        }
      }),
    );
    expect(Math.max(...servedAfter)).toBeLessThan(1_000);

    // One limit across the three under load (the origin counts what is in flight).
    const stats = new LoadStats();
    const startedAt = Date.now();
    const plan: LoadPlan = {
      endpoints,
      pools: [{ subdomain: POOL, originPort: checker.portOf(POOL) }],
      poolDomain: POOL_DOMAIN,
      until: startedAt + LOAD_MS,
      waitMs: WAIT_MS,
      stats,
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) =>
      runClient(plan, n, n % 2 === 0 ? "lock" : "proxy"),
    );
    await sleep(300);
    const held: HeldSlot[] = await Promise.all([
      holdSlot(victim, POOL, 15_000),
      holdSlot(victim, POOL, 15_000),
    ]);
    await sleep(Math.max(0, startedAt + KILL_AT_MS - Date.now()));
    victim.dead = true;
    for (const slot of held) slot.abandon();
    nodes[2]!.process.child.kill("SIGKILL");
    const killedAt = Date.now();
    stats.killedAt = killedAt;

    let reclaimMs = Number.POSITIVE_INFINITY;
    while (Date.now() - killedAt < TERM_MS + 10_000) {
      const stillHeld = new Set(await heldIds(redis, fleet.prefix, POOL));
      if (held.every((slot) => !stillHeld.has(slot.slotId))) {
        reclaimMs = Date.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    expect((await nodes[2]!.process.stop()).signal).toBe("SIGKILL");
    await Promise.all(clients);
    console.info(
      "PostgreSQL fleet run:",
      JSON.stringify({ servedAfter, reclaimMs, maxInFlight: checker.tally(POOL).maxInFlight }),
    );

    expect(stats.problems).toEqual([]);
    expect(checker.tally(POOL).maxInFlight).toBeLessThanOrEqual(LIMIT);
    expect(checker.tally(POOL).maxInFlight).toBeGreaterThanOrEqual(LIMIT - 2);
    expect(reclaimMs).toBeLessThanOrEqual(TERM_MS + RECLAIM_MARGIN_MS);
    for (const endpoint of endpoints) expect(stats.servedBy.get(endpoint.name)).toBeGreaterThan(0);

    // Nothing stored is lost with the killed server: the catalog is whole on the others.
    const status = await sluiceOk(["status", "--json"], env);
    expect(
      JSON.parse(status.stdout)[0].pools.map((pool: { subdomain: string }) => pool.subdomain),
    ).toEqual([POOL]);
    const reply = await send(first, { path: `/pools/${POOL}/lock/acquire` });
    expect(reply.status).toBe(200);
    const { slotId } = JSON.parse(reply.body) as { slotId: string };
    expect(
      JSON.parse((await send(second, { path: `/pools/${POOL}/lock/${slotId}/release` })).body),
    ).toEqual({
      released: true,
    });
  }, 90_000);
});
