import { ManualClock } from "../../src/clock/manual-clock.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import { asyncBoundary } from "./async-boundary-store.js";
import { describeGovernorProperties } from "./governor-properties.js";
import { describeGovernorRegressions } from "./governor-regressions.js";
import { describeStoreConformance, type StoreHarness } from "./store-conformance.js";

async function memoryHarness(): Promise<StoreHarness> {
  const clock = new ManualClock();
  const store = new MemorySlotStore({ clock });
  return { store, clock, cleanup: async () => void (await store.close()) };
}

/** The same store answering a turn later, as a networked store does: exercises the governor's race paths. */
async function asyncMemoryHarness(): Promise<StoreHarness> {
  const clock = new ManualClock();
  const store = asyncBoundary(new MemorySlotStore({ clock }));
  return { store, clock, cleanup: async () => void (await store.close()) };
}

/** The same, handing no waiter back (as Redis): the governor finds its callers by slot id. */
async function asyncIndexedMemoryHarness(): Promise<StoreHarness> {
  const clock = new ManualClock();
  const store = asyncBoundary(new MemorySlotStore({ clock }), { returnsWaiters: false });
  return { store, clock, cleanup: async () => void (await store.close()) };
}

describeStoreConformance("memory", memoryHarness);
describeGovernorProperties("memory", memoryHarness);
describeGovernorRegressions("memory", memoryHarness);
describeStoreConformance("memory behind an async boundary", asyncMemoryHarness);
describeGovernorProperties("memory behind an async boundary", asyncMemoryHarness);
describeGovernorRegressions("memory behind an async boundary", asyncMemoryHarness);
describeGovernorProperties("memory, async, no waiters handed back", asyncIndexedMemoryHarness);
describeGovernorRegressions("memory, async, no waiters handed back", asyncIndexedMemoryHarness);
