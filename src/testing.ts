/**
 * Test helpers for code that uses Sluice: a clock that moves only when told to.
 *
 * @example
 * ```ts
 * import { createGovernor } from "sluice";
 * import { ManualClock } from "sluice/testing";
 * const clock = new ManualClock();
 * const governor = createGovernor({ clock });
 * await clock.advance(30_000);
 * ```
 * @packageDocumentation
 */
export { flushMicrotasks, ManualClock } from "./clock/manual-clock.js";
