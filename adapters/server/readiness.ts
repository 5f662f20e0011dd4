import type { CatalogStore } from "../../src/catalog/types.js";
import type { SlotStore } from "../../src/store/types.js";
import type { CatalogSync } from "./catalog-sync.js";
import type { ReadinessChecks } from "./ops-routes.js";

/** What {@link checkReadiness} looks at. */
export interface ReadinessParts {
  catalog: Pick<CatalogStore, "changeMarker">;
  /**
   * A round trip to the catalog database where `changeMarker` makes none (PostgreSQL keeps
   * the version it last saw); checked instead of the marker.
   */
  pingCatalog?: () => Promise<void>;
  slotStore: SlotStore;
  sync: Pick<CatalogSync, "lastFailure">;
  /** True once shutdown began: the server finishes its requests and takes no new work. */
  stopping: () => boolean;
}

/**
 * How long the catalog check waits: a database that stalls (a dead host, a full network
 * buffer) leaves a query open for minutes, and a load balancer's probe should hear "not
 * ready" well within its own timeout.
 */
const CATALOG_CHECK_MS = 2_000;

/** `work`, or a rejection once `ms` passed without an answer. */
async function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
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
    await withinTime<unknown>(
      parts.pingCatalog ? parts.pingCatalog() : parts.catalog.changeMarker(),
      CATALOG_CHECK_MS,
    );
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
