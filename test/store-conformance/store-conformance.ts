import { describe } from "vitest";
import { describeBudgetRules } from "./conformance-budgets.js";
import { describeGateRules } from "./conformance-gates.js";
import { describeGrantRules } from "./conformance-grants.js";
import { describeLeaseRules } from "./conformance-leases.js";
import { describeLimitRules } from "./conformance-limits.js";
import { describeQueueRules } from "./conformance-queue.js";
import { type StoreHarness, useStoreFixture } from "./store-fixture.js";

/** The factory result each suite needs; see {@link describeStoreConformance}. */
export type { StoreHarness } from "./store-fixture.js";

/**
 * The SlotStore conformance suite: one test per rule of `src/store/SEMANTICS.md`, run directly
 * against the store with a recording listener. Every store implementation must pass it
 * unchanged. `makeHarness` is called before each test and must return an empty store wired to
 * the ManualClock it returns; the suite awaits `store.whenIdle?.()` after every clock advance.
 *
 * @example
 * ```ts
 * describeStoreConformance("MemorySlotStore", async () => {
 *   const clock = new ManualClock();
 *   return { store: new MemorySlotStore({ clock }), clock, cleanup: async () => {} };
 * });
 * ```
 */
export function describeStoreConformance(
  name: string,
  makeHarness: () => Promise<StoreHarness>,
): void {
  describe(`SlotStore conformance: ${name}`, () => {
    const fixture = useStoreFixture(makeHarness);
    describeGrantRules(fixture);
    describeQueueRules(fixture);
    describeLeaseRules(fixture);
    describeGateRules(fixture);
    describeLimitRules(fixture);
    describeBudgetRules(fixture);
  });
}
