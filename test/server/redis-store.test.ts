import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { RejectedError, StoreUnavailableError } from "../../src/errors.js";
import { tempDir } from "../cli/cli-process.js";
import { poolInput } from "./fixtures.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
// A fresh pool name per run: keys of other tests and runs never collide with ours.
const POOL = `srv-${randomBytes(4).toString("hex")}`;

let redis: Redis;
const servers: SluiceServer[] = [];
const cleanups: (() => void)[] = [];

/** A server with its own data directory holding one unbudgeted pool, sharing Redis. */
async function startServer(maxConcurrent: number, lines: string[] = []): Promise<SluiceServer> {
  const { dir, cleanup } = tempDir("sluice-redis-server-");
  cleanups.push(cleanup);
  const data = await openDataDir({ dataDir: dir });
  const team = await data.catalog.store.createTeam({ name: "Acme", slug: "acme" });
  await data.catalog.store.upsertPool(team.id, poolInput(POOL, { maxConcurrent }));
  data.close();
  const config = loadServerConfig({ flags: { port: "0", dataDir: dir, redisUrl: REDIS_URL } });
  const server = await createSluiceServer(config, { log: (line) => lines.push(line) });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
});

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

afterAll(async () => {
  const keys = await redis.keys(`sluice:{p:${POOL}}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe("sluice serve with redisUrl (real Redis)", () => {
  it("two servers share one pool's limit through Redis", async () => {
    const lines: string[] = [];
    const first = await startServer(1, lines);
    const second = await startServer(1);
    expect(lines).toContain(`Governor: Redis slot store at ${REDIS_URL} (fail closed)`);

    const grant = await first.governor.acquire(POOL);
    await expect(second.governor.acquire(POOL)).rejects.toBeInstanceOf(RejectedError);
    await first.governor.release(POOL, grant.slotId);
    await expect(second.governor.acquire(POOL)).resolves.toMatchObject({
      slotId: expect.any(String),
    });
  });

  it("refuses to start when Redis is unreachable and the policy is closed", async () => {
    const { dir, cleanup } = tempDir("sluice-redis-down-");
    cleanups.push(cleanup);
    const config = loadServerConfig({
      flags: { port: "0", dataDir: dir, redisUrl: "redis://:hunter2@127.0.0.1:1" },
    });
    const refused = await createSluiceServer(config).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    const message = (refused as Error).message;
    expect(message).toMatch(/^Cannot reach Redis at redis:\/\/\*\*\*@127\.0\.0\.1:1 \(/);
    expect(message).toContain("--redis-failure-policy open");
    expect(message).not.toContain("hunter2");
    expect(message).not.toContain("maxRetriesPerRequest");
  });
});
