import type { Clock } from "../clock/clock.js";
import type { SecretBox } from "./encryption.js";
import type { CatalogStore } from "./types.js";

/**
 * What the catalog rules run on: a store for truth, a box for secrets the server reads back,
 * and a clock for every timestamp and expiry check.
 *
 * @example
 * ```ts
 * const deps: CatalogDeps = { store: new MemoryCatalogStore(), secretBox, clock: systemClock };
 * ```
 */
export interface CatalogDeps {
  readonly store: CatalogStore;
  readonly secretBox: SecretBox;
  readonly clock: Clock;
}
