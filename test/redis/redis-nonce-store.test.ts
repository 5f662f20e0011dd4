import { afterAll, describe, expect, it } from "vitest";
import { RedisNonceStore } from "../../adapters/redis/redis-nonce-store.js";
import { StoreUnavailableError } from "../../src/errors.js";
import { nonceStoreContract } from "../policies/nonce-store-contract.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("RedisNonceStore");
const prefix = uniquePrefix("nonces");
const opened: RedisNonceStore[] = [];

function open(url = REDIS_URL): RedisNonceStore {
  const store = new RedisNonceStore({ url, prefix, commandTimeoutMs: 300 });
  opened.push(store);
  return store;
}

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  if (available) await deleteKeys(prefix);
});

describe.runIf(available)("RedisNonceStore", () => {
  // Redis expires keys on its own clock: time passes for real here (milliseconds).
  nonceStoreContract("RedisNonceStore", async () => ({
    store: open(),
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  }));

  it("shares nonces between servers: a replay to another one is caught", async () => {
    expect(await open().claim("9:1:shared-nonce", 10_000)).toBe(true);
    expect(await open().claim("9:1:shared-nonce", 10_000)).toBe(false);
  });

  it("admits nothing when Redis does not answer", async () => {
    const away = open("redis://127.0.0.1:1");
    await expect(away.claim("9:1:any-nonce", 1_000)).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
