import { Hono } from "hono";
import { apiTokenAuth } from "../api-token-auth.js";
import type { ControlEnv, ControlRouteDeps } from "../control-env.js";
import { serializePool } from "../serializers.js";
import { budgetOfPool, requireTeamPool, teamBudgetsById } from "../team-lookups.js";

/**
 * `GET /pools` and `GET /pools/{pool}` (pools:read): the token's team's pools, by subdomain.
 *
 * @example
 * ```ts
 * api.route("/", poolRoutes(deps));
 * ```
 */
export function poolRoutes(deps: ControlRouteDeps): Hono<ControlEnv> {
  const { store } = deps.catalog;
  const routes = new Hono<ControlEnv>();

  routes.get("/pools", apiTokenAuth(deps.catalog, "pools:read"), async (c) => {
    const teamId = c.var.auth.team.id;
    const budgets = await teamBudgetsById(store, teamId);
    const data = (await store.listPools(teamId)).map((pool) =>
      serializePool(pool, pool.budgetId === null ? null : budgets.get(pool.budgetId)),
    );
    return c.json({ data });
  });

  routes.get("/pools/:pool", apiTokenAuth(deps.catalog, "pools:read"), async (c) => {
    const pool = await requireTeamPool(store, c.var.auth.team.id, c.req.param("pool"));
    return c.json({ data: serializePool(pool, await budgetOfPool(store, pool)) });
  });

  return routes;
}
