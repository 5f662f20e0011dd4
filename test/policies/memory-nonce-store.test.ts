import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { StoreUnavailableError } from "../../src/errors.js";
import { MemoryNonceStore } from "../../src/policies/nonce-store.js";
import { nonceStoreContract } from "./nonce-store-contract.js";

nonceStoreContract("MemoryNonceStore", async () => {
  const clock = new ManualClock();
  return {
    store: new MemoryNonceStore({ now: () => clock.now() }),
    pass: (ms) => clock.advance(ms),
  };
});

describe("MemoryNonceStore bound", () => {
  it("refuses new nonces rather than forget live ones when full, and takes them again once some expire", async () => {
    const clock = new ManualClock();
    const store = new MemoryNonceStore({ max: 3, now: () => clock.now() });
    expect(await store.claim("a", 100)).toBe(true);
    expect(await store.claim("b", 100)).toBe(true);
    expect(await store.claim("c", 1_000)).toBe(true);
    await expect(store.claim("d", 100)).rejects.toBeInstanceOf(StoreUnavailableError);
    // Still a replay: the oldest nonce was not forgotten to make room.
    expect(await store.claim("a", 100)).toBe(false);
    await clock.advance(101);
    expect(await store.claim("d", 100)).toBe(true);
    expect(await store.claim("c", 100)).toBe(false);
  });
});
