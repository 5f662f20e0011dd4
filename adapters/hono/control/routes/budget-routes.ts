import { Hono } from "hono";
import { apiTokenAuth } from "../api-token-auth.js";
import type { ControlEnv, ControlRouteDeps } from "../control-env.js";
import { serializeBudget, serializePool } from "../serializers.js";
import { requireTeamBudget } from "../team-lookups.js";

/**
 * `GET /budgets`, `GET /budgets/{budget}` (budgets:read) and `GET /budgets/{budget}/pools`
 * (pools:read), all limited to the token's team.
 *
 * @example
 * ```ts
 * api.route("/", budgetRoutes(deps));
 * ```
 */
export function budgetRoutes(deps: ControlRouteDeps): Hono<ControlEnv> {
  const { store } = deps.catalog;
  const routes = new Hono<ControlEnv>();

  routes.get("/budgets", apiTokenAuth(deps.catalog, "budgets:read"), async (c) => {
    const teamId = c.var.auth.team.id;
    const pools = await store.listPools(teamId);
    const data = (await store.listBudgets(teamId)).map((budget) => serializeBudget(budget, pools));
    return c.json({ data });
  });

  routes.get("/budgets/:budget", apiTokenAuth(deps.catalog, "budgets:read"), async (c) => {
    const teamId = c.var.auth.team.id;
    const budget = await requireTeamBudget(store, teamId, c.req.param("budget"));
    return c.json({ data: serializeBudget(budget, await store.listPools(teamId)) });
  });

  routes.get("/budgets/:budget/pools", apiTokenAuth(deps.catalog, "pools:read"), async (c) => {
    const teamId = c.var.auth.team.id;
    const budget = await requireTeamBudget(store, teamId, c.req.param("budget"));
    const data = (await store.listPools(teamId))
      .filter((pool) => pool.budgetId === budget.id)
      .map((pool) => serializePool(pool, budget));
    return c.json({ data });
  });

  return routes;
}
