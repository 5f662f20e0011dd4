import { Hono } from "hono";
import { summarizePoolMetrics } from "../../../../src/metrics/summary.js";
import { apiTokenAuth } from "../api-token-auth.js";
import type { ControlEnv, ControlRouteDeps } from "../control-env.js";
import { parseInput, queryInput } from "../request-input.js";
import { PoolMetricsQuerySchema } from "../request-schemas.js";
import { requireTeamPool } from "../team-lookups.js";

const METRICS_QUERY_FIELDS = ["from", "to"] as const;

/**
 * `GET /pools/{pool}/metrics?from&to` (metrics:read): the pool's PoolMetricsSummary over the
 * range, clamped to the pool's metrics retention. Not wrapped in `data`.
 *
 * @example
 * ```ts
 * api.route("/", poolMetricsRoutes(deps));
 * ```
 */
export function poolMetricsRoutes(deps: ControlRouteDeps): Hono<ControlEnv> {
  const routes = new Hono<ControlEnv>();
  routes.get("/pools/:pool/metrics", apiTokenAuth(deps.catalog, "metrics:read"), async (c) => {
    const pool = await requireTeamPool(deps.catalog.store, c.var.auth.team.id, c.req.param("pool"));
    const query = parseInput(
      PoolMetricsQuerySchema,
      queryInput(c.req.query(), METRICS_QUERY_FIELDS),
    );
    const summary = summarizePoolMetrics({
      recorder: deps.metrics,
      // The governor knows pools by subdomain, so that is the recorder's key too.
      pool: pool.subdomain,
      poolId: pool.id,
      now: deps.clock.now(),
      retentionDays: pool.metricsRetentionDays,
      from: query.from ?? null,
      to: query.to ?? null,
    });
    return c.json(summary);
  });
  return routes;
}
