import { Hono } from "hono";
import type { DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import { type PoolFigures, poolFigures } from "../live-figures.js";
import { LiveOverview, type OverviewData, OverviewPage } from "../pages/overview-page.js";

async function overviewData(deps: DashboardDeps, teamId: number): Promise<OverviewData> {
  const store = deps.catalog.store;
  const [budgets, pools] = await Promise.all([store.listBudgets(teamId), store.listPools(teamId)]);
  const figures = new Map<number, PoolFigures>();
  for (const pool of pools) figures.set(pool.id, await poolFigures(deps, pool));
  return { budgets, pools, figures };
}

/** The overview page and its live fragment. */
export function overviewRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  routes.get("/", async (c) => {
    const data = await overviewData(deps, c.var.signedIn.team.id);
    return c.html(<OverviewPage signedIn={c.var.signedIn} data={data} />);
  });
  routes.get("/live/overview", async (c) => {
    const data = await overviewData(deps, c.var.signedIn.team.id);
    return c.html(<LiveOverview data={data} manager={c.var.signedIn.role !== "member"} />);
  });
  return routes;
}
