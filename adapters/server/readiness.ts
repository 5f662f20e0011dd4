import type { CatalogStore } from "../../src/catalog/types.js";
import type { SlotStore } from "../../src/store/types.js";
import type { CatalogSync } from "./catalog-sync.js";
import type { ReadinessChecks } from "./ops-routes.js";

/** What {@link checkReadiness} looks at. */
export interface ReadinessParts {
  catalog: Pick<CatalogStore, "changeMarker">;
  slotStore: SlotStore;
  sync: Pick<CatalogSync, "lastFailure">;
  /** True once shutdown began: the server finishes its requests and takes no new work. */
  stopping: () => boolean;
}

/** A slot store that reports its connection state (the Redis store does). */
interface HealthReporting {
  health(): { state: string; partial?: boolean };
}

/** The Redis check while only some cluster masters are down: passing (see `redisState`). */
export const PARTIAL_REDIS =
  "ok (some Redis Cluster masters are down: their pools follow the failure policy)";

/**
 * Checks each part the server needs to serve traffic: the catalog database answers, the
 * Redis slot store (when there is one) is reachable, the last catalog sync succeeded, and the
 * server is not stopping. Each check says "ok" or the part's state, never an address or a
 * secret (the reasons are in the server log).
 *
 * @example
 * ```ts
 * await checkReadiness({ catalog: store, slotStore: governor.store, sync, stopping: () => false });
 * // { catalog: "ok", catalogSync: "ok", redis: "ok", server: "ok" }
 * ```
 */
export async function checkReadiness(parts: ReadinessParts): Promise<ReadinessChecks> {
  const checks: Record<string, string> = {};
  try {
    await parts.catalog.changeMarker();
    checks.catalog = "ok";
  } catch {
    checks.catalog = "unreachable";
  }
  checks.catalogSync = parts.sync.lastFailure() === null ? "ok" : "failing";
  const store = parts.slotStore as SlotStore & Partial<HealthReporting>;
  if (typeof store.health === "function") {
    checks.redis = await redisState(store as SlotStore & HealthReporting);
  }
  checks.server = parts.stopping() ? "stopping" : "ok";
  return checks;
}

/**
 * The store's own view, then a round trip: a stalled Redis may not have failed a call yet.
 * Some masters of a cluster down is still ready: every server shares that outage, and taking
 * them all out of a load balancer would stop the pools the other masters serve too.
 */
async function redisState(store: SlotStore & HealthReporting): Promise<string> {
  const health = store.health();
  if (health.partial) return PARTIAL_REDIS;
  const before = health.state;
  if (before !== "ok") return before;
  try {
    await store.now();
  } catch {
    return "unreachable";
  }
  return store.health().state;
}
