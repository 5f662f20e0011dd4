import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { deleteKeysUnder } from "../../adapters/redis/index.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("the deleteKeysUnder tests");

describe.skipIf(!available)("deleteKeysUnder", () => {
  const mine = uniquePrefix("delete-keys");
  const neighbour = uniquePrefix("delete-keys-neighbour");
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    await deleteKeysUnder(neighbour, REDIS_URL);
    redis.disconnect();
  });

  it("deletes the keys under its prefix only", async () => {
    await redis.set(`${mine}{p:a}:pool:a`, "1");
    await redis.set(`${mine}{p:b}:epoch`, "1");
    await redis.set(`${neighbour}{p:a}:pool:a`, "1");
    expect(await deleteKeysUnder(mine, REDIS_URL)).toBe(2);
    expect(await redis.exists(`${neighbour}{p:a}:pool:a`)).toBe(1);
  });

  it("refuses an empty or missing prefix, which would match every key, before touching Redis", async () => {
    await redis.set(`${neighbour}{p:c}:pool:c`, "1");
    for (const prefix of ["", undefined, { prefix: mine }]) {
      const refused = deleteKeysUnder(prefix as unknown as string, REDIS_URL);
      await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(refused).rejects.toThrow(/non-empty string/);
    }
    expect(await redis.exists(`${neighbour}{p:c}:pool:c`)).toBe(1);
  });
});
