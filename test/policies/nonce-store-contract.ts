import { beforeEach, describe, expect, it } from "vitest";
import type { NonceStore } from "../../src/policies/nonce-store.js";

/** A store under test and a way to let time pass for it. */
export interface NonceStoreSubject {
  store: NonceStore;
  /** Lets `ms` pass for the store's expiry. */
  pass(ms: number): Promise<void>;
}

/**
 * What every {@link NonceStore} does: a nonce is new once, then a replay until its time to
 * live has passed. Run against memory and Redis.
 */
export function nonceStoreContract(name: string, open: () => Promise<NonceStoreSubject>): void {
  describe(`${name} (NonceStore contract)`, () => {
    let subject: NonceStoreSubject;
    beforeEach(async () => {
      subject = await open();
    });

    it("claims a nonce once; the same nonce again is a replay", async () => {
      expect(await subject.store.claim("7:1:nonce-a", 1_000)).toBe(true);
      expect(await subject.store.claim("7:1:nonce-a", 1_000)).toBe(false);
      expect(await subject.store.claim("7:1:nonce-b", 1_000)).toBe(true);
    });

    it("remembers a nonce for its time to live, and no longer", async () => {
      expect(await subject.store.claim("7:1:nonce-c", 60)).toBe(true);
      await subject.pass(20);
      expect(await subject.store.claim("7:1:nonce-c", 60)).toBe(false);
      await subject.pass(80);
      expect(await subject.store.claim("7:1:nonce-c", 60)).toBe(true);
    });

    it("answers concurrent claims of one nonce with a single true", async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => subject.store.claim("7:1:nonce-d", 1_000)),
      );
      expect(answers.filter(Boolean)).toHaveLength(1);
    });
  });
}
