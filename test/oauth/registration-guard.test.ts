import { describe, expect, it } from "vitest";
import { MemoryOAuthStore } from "../../adapters/oauth/memory-oauth-store.js";
import {
  REGISTRATION_LIMITS,
  RegistrationGuard,
  RegistrationThrottledError,
} from "../../adapters/oauth/registration-guard.js";
import { ManualClock } from "../../src/clock/manual-clock.js";

const HOUR = 60 * 60_000;

describe("open client registration limits", () => {
  it("lets an address register perAddress times per window, then 429 until the window ends", async () => {
    const clock = new ManualClock(0);
    const guard = new RegistrationGuard(new MemoryOAuthStore(), clock, {
      ...REGISTRATION_LIMITS,
      perAddress: 3,
      windowMs: 60_000,
    });
    for (let i = 0; i < 3; i++) await guard.admit("203.0.113.7");
    clock.advanceSync(20_000);
    const refused = await guard.admit("203.0.113.7").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RegistrationThrottledError);
    expect((refused as RegistrationThrottledError).retryAfterMs).toBe(40_000);
    expect((refused as RegistrationThrottledError).status).toBe(429);
    await guard.admit("198.51.100.1"); // another address has its own count
    clock.advanceSync(40_000);
    await guard.admit("203.0.113.7");
  });

  it("counts at most maxAddresses addresses: the oldest are forgotten first", async () => {
    const clock = new ManualClock(0);
    const guard = new RegistrationGuard(new MemoryOAuthStore(), clock, {
      ...REGISTRATION_LIMITS,
      perAddress: 1,
      maxAddresses: 100,
    });
    for (let i = 0; i < 1_000; i++) {
      await guard.admit(`10.0.${i >> 8}.${i & 255}`);
      clock.advanceSync(1);
    }
    const windows = (guard as unknown as { windows: Map<string, unknown> }).windows;
    expect(windows.size).toBe(100);
    // The newest are still counted; the first was forgotten.
    await expect(guard.admit("10.0.3.231")).rejects.toBeInstanceOf(RegistrationThrottledError);
    await guard.admit("10.0.0.0");
  });

  it("deletes clients nobody granted anything within a day of registering", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryOAuthStore();
    const guard = new RegistrationGuard(store, clock);
    const redirectUris = ["http://127.0.0.1/cb"];
    await store.insertClient({ clientId: "unused", clientName: "A", redirectUris, createdAt: 0 });
    await store.insertClient({ clientId: "used", clientName: "B", redirectUris, createdAt: 0 });
    await store.insertGrant({
      userId: 1,
      teamId: 1,
      clientId: "used",
      clientName: "B",
      redirectHost: "127.0.0.1",
      scopes: ["pools:read"],
      resource: "http://localhost/mcp",
      createdAt: 10,
      lastUsedAt: null,
      revokedAt: null,
    });
    clock.advanceSync(23 * HOUR);
    await guard.admit("203.0.113.7");
    expect(await store.getClient("unused")).toBeDefined();
    clock.advanceSync(2 * HOUR);
    await guard.admit("203.0.113.7");
    expect(await store.getClient("unused")).toBeUndefined();
    expect(await store.getClient("used")).toBeDefined();
  });
});
