import { Hono } from "hono";
import type { BudgetRecord, CatalogStore, PoolRecord } from "../../../src/catalog/types.js";
import { ConflictError } from "../../../src/errors.js";
import {
  type BudgetForm,
  type BudgetPlan,
  budgetFormOf,
  budgetVersion,
  checkBudgetForm,
  readBudgetForm,
} from "../budget-form.js";
import { applyToGovernor, poolInputOf } from "../catalog-writes.js";
import type { DashboardContext, DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import { type FieldErrorMap, readForm } from "../forms.js";
import { BudgetPage } from "../pages/budget-page.js";
import { MessagePage } from "../pages/message-page.js";

/** Refused when the budget or a pool changed after the form was opened: the later save must not silently win. */
export const BUDGET_CHANGED_SINCE_OPENED =
  "This budget or one of the team's pools was changed since you opened the form (in another tab, by someone else, or by sluice apply). Reload the page to see the current settings, then make your change again.";

/** The team's budgets and pools as the store has them now, and the budget `id` names (undefined: none such). */
async function loadBudget(store: CatalogStore, teamId: number, id: string | undefined) {
  const [budgets, pools] = await Promise.all([store.listBudgets(teamId), store.listPools(teamId)]);
  const budget = id === undefined ? null : (budgets.find((b) => String(b.id) === id) ?? undefined);
  return { budgets, pools, budget };
}

/**
 * Checks the form against the catalog as it is inside the transaction (an edit only when
 * nothing changed since the form was opened) and writes the budget and its members: the
 * budget (a rename keeps its id), pools joining with their reservation,
 * pools leaving it. One unit: the budget and its pools' moves are seen together or not at
 * all, and no pool is written back from a stale read.
 */
function saveBudget(
  deps: DashboardDeps,
  teamId: number,
  id: string | undefined,
  form: BudgetForm,
): Promise<{ saved: BudgetRecord } | { errors: FieldErrorMap } | "not found"> {
  return deps.catalog.store.atomically(async (tx) => {
    const { budgets, pools, budget: current } = await loadBudget(tx, teamId, id);
    if (current === undefined) return "not found";
    if (
      (current !== null || form.version !== "") &&
      form.version !== budgetVersion(current, pools)
    ) {
      throw new ConflictError(BUDGET_CHANGED_SINCE_OPENED);
    }
    const checked = checkBudgetForm(form, pools, budgets, current);
    if ("errors" in checked) return checked;
    return { saved: await writeBudget(tx, teamId, current, checked.plan, pools) };
  });
}

async function writeBudget(
  tx: CatalogStore,
  teamId: number,
  current: BudgetRecord | null,
  plan: BudgetPlan,
  pools: readonly PoolRecord[],
): Promise<BudgetRecord> {
  // A rename keeps the budget's id: API and MCP callers and other open forms hold it.
  const renamed = current && (await tx.renameBudget(teamId, current.id, plan.name));
  if (current && !renamed) throw new ConflictError(BUDGET_CHANGED_SINCE_OPENED);
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
  return saved;
}

/** Budget create, edit and delete (owners and admins; members get 403 before these run). */
export function budgetRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  const store = deps.catalog.store;

  const load = (teamId: number, id: string | undefined) => loadBudget(store, teamId, id);

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
    const { pools, budget } = await load(teamId, id);
    if (budget === undefined) return c.notFound();
    const form = readBudgetForm(await readForm(c), pools);
    const refused = (errors: FieldErrorMap, status: 409 | 422) =>
      c.html(
        <BudgetPage
          signedIn={c.var.signedIn}
          budget={budget}
          pools={pools}
          form={form}
          errors={errors}
        />,
        status,
      );
    let result: Awaited<ReturnType<typeof saveBudget>>;
    try {
      result = await saveBudget(deps, teamId, id, form);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      return refused({ "": [error.message] }, 409);
    }
    if (result === "not found") return c.notFound();
    if ("errors" in result) return refused(result.errors, 422);
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
