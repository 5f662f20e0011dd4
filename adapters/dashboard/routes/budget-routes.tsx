import { Hono } from "hono";
import type { BudgetRecord, PoolRecord } from "../../../src/catalog/types.js";
import { ConflictError } from "../../../src/errors.js";
import { type BudgetPlan, budgetFormOf, checkBudgetForm, readBudgetForm } from "../budget-form.js";
import { applyToGovernor, poolInputOf } from "../catalog-writes.js";
import type { DashboardContext, DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import { readForm } from "../forms.js";
import { BudgetPage } from "../pages/budget-page.js";
import { MessagePage } from "../pages/message-page.js";

/**
 * Writes a budget and its members in one transaction: the budget (renamed = a new one, then
 * the old deleted), pools joining with their reservation, pools leaving it.
 */
function saveBudget(
  deps: DashboardDeps,
  teamId: number,
  current: BudgetRecord | null,
  plan: BudgetPlan,
  pools: readonly PoolRecord[],
): Promise<BudgetRecord> {
  // One unit: the budget and its pools' moves are seen together or not at all.
  return deps.catalog.store.atomically(async (tx) => {
    const saved = await tx.upsertBudget(teamId, {
      name: plan.name,
      originMaxConcurrent: plan.originMaxConcurrent,
    });
    for (const pool of pools) {
      const reserved = plan.reservations.get(pool.id);
      const leaving = reserved === undefined && current !== null && pool.budgetId === current.id;
      const target =
        reserved !== undefined
          ? { budgetId: saved.id, reservedConcurrent: reserved }
          : leaving
            ? { budgetId: null, reservedConcurrent: 0 }
            : null;
      if (
        !target ||
        (target.budgetId === pool.budgetId && target.reservedConcurrent === pool.reservedConcurrent)
      )
        continue;
      await tx.upsertPool(teamId, { ...poolInputOf(pool), ...target });
    }
    if (current && current.id !== saved.id) await tx.deleteBudget(teamId, current.id);
    return saved;
  });
}

/** Budget create, edit and delete (owners and admins; members get 403 before these run). */
export function budgetRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  const store = deps.catalog.store;

  async function load(teamId: number, id: string | undefined) {
    const [budgets, pools] = await Promise.all([
      store.listBudgets(teamId),
      store.listPools(teamId),
    ]);
    const budget =
      id === undefined ? null : (budgets.find((b) => String(b.id) === id) ?? undefined);
    return { budgets, pools, budget };
  }

  routes.get("/budget/new", async (c) => {
    const { pools } = await load(c.var.signedIn.team.id, undefined);
    return c.html(
      <BudgetPage
        signedIn={c.var.signedIn}
        budget={null}
        pools={pools}
        form={budgetFormOf(null, pools)}
      />,
    );
  });

  routes.get("/budget/:id/edit", async (c) => {
    const { pools, budget } = await load(c.var.signedIn.team.id, c.req.param("id"));
    if (!budget) return c.notFound();
    return c.html(
      <BudgetPage
        signedIn={c.var.signedIn}
        budget={budget}
        pools={pools}
        form={budgetFormOf(budget, pools)}
      />,
    );
  });

  async function save(c: DashboardContext, id: string | undefined) {
    const teamId = c.var.signedIn.team.id;
    const { budgets, pools, budget } = await load(teamId, id);
    if (budget === undefined) return c.notFound();
    const form = readBudgetForm(await readForm(c), pools);
    const checked = checkBudgetForm(form, pools, budgets, budget);
    if ("errors" in checked) {
      return c.html(
        <BudgetPage
          signedIn={c.var.signedIn}
          budget={budget}
          pools={pools}
          form={form}
          errors={checked.errors}
        />,
        422,
      );
    }
    await saveBudget(deps, teamId, budget, checked.plan, pools);
    await applyToGovernor(deps);
    return c.redirect("/", 303);
  }

  routes.post("/budget", (c) => save(c, undefined));
  routes.post("/budget/:id", (c) => save(c, c.req.param("id")));

  routes.post("/budget/:id/delete", async (c) => {
    const teamId = c.var.signedIn.team.id;
    const { budget } = await load(teamId, c.req.param("id"));
    if (!budget) return c.notFound();
    try {
      await store.deleteBudget(teamId, budget.id);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      return c.html(
        <MessagePage
          title="Budget not deleted"
          signedIn={c.var.signedIn}
          message={error.message}
          link={`/budget/${budget.id}/edit`}
        />,
        409,
      );
    }
    await applyToGovernor(deps);
    return c.redirect("/", 303);
  });
  return routes;
}
