import { beforeEach, describe, expect, it, vi } from "vitest";
import { SignInThrottledError } from "../../src/auth/auth-errors.js";
import { AuthService } from "../../src/auth/auth-service.js";
import { MemoryAuthStore } from "../../src/auth/memory-auth-store.js";
import { DEFAULT_PASSWORD_COST, hashPassword, verifyPassword } from "../../src/auth/passwords.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { InvalidArgumentError, UnauthorizedError } from "../../src/errors.js";
import { TEST_PASSWORD_COST } from "./fixtures.js";

const PASSWORD = "correct horse battery";

async function setup() {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const catalogStore = new MemoryCatalogStore({ clock });
  const catalog = new CatalogService({
    store: catalogStore,
    secretBox: new SecretBox(Buffer.alloc(32, 7)),
    clock,
  });
  const store = new MemoryAuthStore();
  const auth = new AuthService({
    store,
    catalog: catalogStore,
    clock,
    passwordCost: TEST_PASSWORD_COST,
  });
  const acme = await catalog.createTeamWithOwner({
    teamName: "Acme",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  return { clock, catalog, store, auth, acme };
}

describe("passwords", () => {
  it("hashes with scrypt N=2^17, r=8, p=1 by default and verifies only the right password", async () => {
    const stored = await hashPassword(PASSWORD);
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(DEFAULT_PASSWORD_COST).toEqual({ N: 131072, r: 8, p: 1 });
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, stored)).toBe(false);
  });

  it("salts every hash and refuses short passwords", async () => {
    const a = await hashPassword(PASSWORD, TEST_PASSWORD_COST);
    expect(await hashPassword(PASSWORD, TEST_PASSWORD_COST)).not.toBe(a);
    await expect(hashPassword("short", TEST_PASSWORD_COST)).rejects.toThrow(/at least 12/);
    expect(await verifyPassword(PASSWORD, undefined, TEST_PASSWORD_COST)).toBe(false);
  });
});

describe("AuthService", () => {
  let t: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    t = await setup();
  });

  it("signs in with the right password only, saying the same for a wrong email", async () => {
    await t.auth.setPassword(t.acme.owner.id, PASSWORD);
    const started = await t.auth.signIn({
      email: " ADA@acme.test",
      password: PASSWORD,
      address: "10.0.0.1",
    });
    expect(started.user.id).toBe(t.acme.owner.id);
    expect(started.team.slug).toBe("acme");
    expect(started.role).toBe("owner");
    expect((await t.auth.authenticate(started.sessionId))?.user.email).toBe("ada@acme.test");
    // Only the hash is stored.
    expect(await t.store.findSession(started.sessionId)).toBeUndefined();
    const wrong = t.auth.signIn({
      email: "ada@acme.test",
      password: "wrong password!",
      address: null,
    });
    await expect(wrong).rejects.toThrow(new UnauthorizedError("Wrong email or password."));
    const nobody = t.auth.signIn({ email: "nobody@acme.test", password: PASSWORD, address: null });
    await expect(nobody).rejects.toThrow(new UnauthorizedError("Wrong email or password."));
  });

  it("throttles an account after 5 failures, even with the right password, until the window ends", async () => {
    await t.auth.setPassword(t.acme.owner.id, PASSWORD);
    for (let i = 0; i < 5; i++) {
      await expect(
        t.auth.signIn({
          email: "ada@acme.test",
          password: "not the password",
          address: `10.0.0.${i}`,
        }),
      ).rejects.toThrow(UnauthorizedError);
    }
    const right = { email: "ada@acme.test", password: PASSWORD, address: "10.9.9.9" };
    await expect(t.auth.signIn(right)).rejects.toThrow(SignInThrottledError);
    await t.clock.advance(15 * 60_000);
    await expect(t.auth.signIn(right)).resolves.toMatchObject({ role: "owner" });
  });

  it("throttles an address after 20 failures across accounts", async () => {
    await t.auth.setPassword(t.acme.owner.id, PASSWORD);
    for (let i = 0; i < 20; i++) {
      await expect(
        t.auth.signIn({ email: `guess${i}@acme.test`, password: PASSWORD, address: "10.6.6.6" }),
      ).rejects.toThrow(UnauthorizedError);
    }
    const fromThere = { email: "ada@acme.test", password: PASSWORD, address: "10.6.6.6" };
    await expect(t.auth.signIn(fromThere)).rejects.toThrow(SignInThrottledError);
    await expect(t.auth.signIn({ ...fromThere, address: "10.7.7.7" })).resolves.toBeDefined();
  });

  it("clears failure counts and sessions nobody can use any more out of the store, at most once a minute", async () => {
    const guess = (i: number) =>
      t.auth.signIn({ email: `guess${i}@acme.test`, password: PASSWORD, address: `10.0.${i}.1` });
    for (let i = 0; i < 10; i++) await expect(guess(i)).rejects.toThrow(UnauthorizedError);
    const { token } = await t.auth.createSignInLink(t.acme.team.id, t.acme.owner.id);
    const idle = await t.auth.redeemSignInLink(token);
    const deleteExpired = vi.spyOn(t.store, "deleteExpired");
    const rowsAt = (at: number) =>
      t.store.failures("account:guess3@acme.test", at, t.auth.policy.windowMs);
    const startedAt = t.clock.now();

    await t.clock.advance(Math.max(t.auth.policy.windowMs, t.auth.policy.idleMs));
    await expect(guess(100)).rejects.toThrow(UnauthorizedError);
    // The windows are over: the next sign-in took their rows (and the idle session's) out.
    expect((await rowsAt(startedAt)).count).toBe(0);
    expect(await t.store.findSession(idle.session.idHash)).toBeUndefined();
    expect(
      (await t.store.failures("account:guess100@acme.test", t.clock.now(), t.auth.policy.windowMs))
        .count,
    ).toBe(1);
    await expect(guess(101)).rejects.toThrow(UnauthorizedError);
    await t.clock.advance(59_000);
    await expect(guess(102)).rejects.toThrow(UnauthorizedError);
    expect(deleteExpired).toHaveBeenCalledTimes(1);
    await t.clock.advance(1_000);
    await expect(guess(103)).rejects.toThrow(UnauthorizedError);
    expect(deleteExpired).toHaveBeenCalledTimes(2);
  });

  it("ends a session after the idle time, and after the absolute time however active", async () => {
    const { token } = await t.auth.createSignInLink(t.acme.team.id, t.acme.owner.id);
    const idle = await t.auth.redeemSignInLink(token);
    await t.clock.advance(t.auth.policy.idleMs - 1);
    expect(await t.auth.authenticate(idle.sessionId)).not.toBeNull();
    await t.clock.advance(t.auth.policy.idleMs);
    expect(await t.auth.authenticate(idle.sessionId)).toBeNull();

    const { token: second } = await t.auth.createSignInLink(t.acme.team.id, t.acme.owner.id);
    const active = await t.auth.redeemSignInLink(second);
    for (let spent = 0; spent < t.auth.policy.absoluteMs - 3_600_000; spent += 3_600_000) {
      await t.clock.advance(3_600_000);
      expect(await t.auth.authenticate(active.sessionId)).not.toBeNull();
    }
    await t.clock.advance(3_600_000);
    expect(await t.auth.authenticate(active.sessionId)).toBeNull();
  });

  it("honours a sign-in link once and not after 15 minutes", async () => {
    const { token, expiresAt } = await t.auth.createSignInLink(t.acme.team.id, t.acme.owner.id);
    expect(expiresAt - t.clock.now()).toBe(15 * 60_000);
    await t.auth.redeemSignInLink(token);
    await expect(t.auth.redeemSignInLink(token)).rejects.toThrow(UnauthorizedError);
    const late = await t.auth.createSignInLink(t.acme.team.id, t.acme.owner.id);
    await t.clock.advance(15 * 60_000);
    await expect(t.auth.redeemSignInLink(late.token)).rejects.toThrow(UnauthorizedError);
    await expect(t.auth.redeemSignInLink("slc_sil_junk")).rejects.toThrow(UnauthorizedError);
  });

  it("signs out here or everywhere", async () => {
    await t.auth.setPassword(t.acme.owner.id, PASSWORD);
    const input = { email: "ada@acme.test", password: PASSWORD, address: null };
    const [one, two, three] = [
      await t.auth.signIn(input),
      await t.auth.signIn(input),
      await t.auth.signIn(input),
    ];
    await t.auth.signOut(one.sessionId);
    expect(await t.auth.authenticate(one.sessionId)).toBeNull();
    expect(await t.auth.authenticate(two.sessionId)).not.toBeNull();
    expect(await t.auth.signOutEverywhere(t.acme.owner.id)).toBe(2);
    expect(await t.auth.authenticate(three.sessionId)).toBeNull();
  });

  it("refuses a weak password and an unknown user", async () => {
    await expect(t.auth.setPassword(t.acme.owner.id, "short")).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(t.auth.setPassword(9_999, PASSWORD)).rejects.toThrow(InvalidArgumentError);
  });
});
