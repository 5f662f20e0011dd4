import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisSlotStore } from "../../adapters/redis/index.js";
import { redisServerWarnings } from "../../adapters/redis/server-check.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { tempDir } from "../cli/cli-process.js";
import { startRedisServer } from "./redis-server-process.js";

describe("redisServerWarnings (INFO text)", () => {
  const info = (version: string, policy: string) =>
    `# Server\r\nredis_version:${version}\r\nredis_mode:standalone\r\n\r\n# Memory\r\nmaxmemory_policy:${policy}\r\n`;

  it("finds nothing wrong with Redis 7 and noeviction", () => {
    expect(redisServerWarnings(info("7.0.15", "noeviction"))).toEqual([]);
    expect(redisServerWarnings(info("8.0.2", "noeviction"))).toEqual([]);
  });

  it("warns about any eviction policy, naming it and the fix", () => {
    const [warning, ...rest] = redisServerWarnings(info("7.2.4", "allkeys-lru"));
    expect(rest).toEqual([]);
    expect(warning).toContain("maxmemory-policy allkeys-lru");
    expect(warning).toContain("Set maxmemory-policy noeviction");
  });

  it("warns about a Redis older than 7.0", () => {
    expect(redisServerWarnings(info("6.2.14", "noeviction"))).toEqual([
      expect.stringContaining("Redis 6.2.14 is older than 7.0.0"),
    ]);
    expect(redisServerWarnings(info("7.0.0", "noeviction"))).toEqual([]);
  });

  it("says nothing about fields a server does not report", () => {
    expect(redisServerWarnings("")).toEqual([]);
    expect(redisServerWarnings("redis_version:unstable\n")).toEqual([]);
  });
});

/**
 * A redis-server of the test's own (the shared one on 6379 must keep its settings), started
 * with `args`. Under CI a missing redis-server binary fails the test; elsewhere it is skipped.
 */
async function ownRedis(args: string[]): Promise<{ url: string; stop(): void } | null> {
  if (spawnSync("redis-server", ["--version"]).error) {
    const message = "redis-server is not installed: the server check tests cannot run.";
    if (process.env.CI === "true") throw new Error(message);
    console.warn(`\n!!! ${message} Skipping. !!!\n`);
    return null;
  }
  const { port, started } = await startRedisServer(() => args);
  return { url: `redis://127.0.0.1:${port}`, stop: () => started.process.kill("SIGKILL") };
}

describe("checking the Redis server (real redis-server processes)", () => {
  let evicting: Awaited<ReturnType<typeof ownRedis>>;
  let safe: Awaited<ReturnType<typeof ownRedis>>;

  beforeAll(async () => {
    evicting = await ownRedis(["--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"]);
    safe = await ownRedis([]);
  });

  afterAll(() => {
    evicting?.stop();
    safe?.stop();
  });

  it("the store reports an evicting Redis, and nothing for a default one", async (context) => {
    if (!evicting || !safe) return context.skip();
    const stores = [evicting.url, safe.url].map((url) => createRedisSlotStore({ url }));
    try {
      const [evictingWarnings, safeWarnings] = await Promise.all(
        stores.map((store) => store.serverWarnings()),
      );
      expect(evictingWarnings).toEqual([expect.stringContaining("maxmemory-policy allkeys-lru")]);
      expect(safeWarnings).toEqual([]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("sluice serve logs the warning at start", async (context) => {
    if (!evicting) return context.skip();
    const { dir, cleanup } = tempDir("sluice-redis-check-");
    const lines: string[] = [];
    const config = loadServerConfig({
      flags: { port: "0", dataDir: dir, redisUrl: evicting.url },
    });
    const server = await createSluiceServer(config, { log: (line) => lines.push(line) });
    try {
      expect(lines).toContainEqual(
        expect.stringMatching(/^Warning: Redis evicts keys .*maxmemory-policy allkeys-lru/),
      );
    } finally {
      await server.close();
      cleanup();
    }
  });
});
