import { Hono } from "hono";
import type { PoolRecord } from "../../../src/catalog/types.js";
import { ConflictError } from "../../../src/errors.js";
import { applyToGovernor } from "../catalog-writes.js";
import type { DashboardContext, DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import { type FieldErrorMap, formText, readForm } from "../forms.js";
import { PoolFormPage } from "../pages/pool-form-page.js";
import { withoutSecretKeys } from "../policy-form.js";
import {
  checkPoolForm,
  type PoolFormValues,
  poolFormValues,
  readPoolForm,
  sealPlannedSecrets,
} from "../pool-form.js";

/** Refused when the pool changed after the form was opened: the later save must not silently win. */
export const CHANGED_SINCE_OPENED =
  "This pool was changed since you opened it (in another tab, by someone else, or by sluice apply). Reload the page to see the current settings, then make your change again.";

/** Pool create, edit and delete, checked like `sluice apply` and applied to the governor at once. */
export function poolRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  const store = deps.catalog.store;

  async function context(teamId: number) {
    const [pools, budgets] = await Promise.all([
      store.listPools(teamId),
      store.listBudgets(teamId),
    ]);
    return { pools, budgets };
  }

  async function page(
    c: DashboardContext,
    existing: PoolRecord | null,
    values: PoolFormValues,
    errors?: FieldErrorMap,
    status: 200 | 409 | 422 = 200,
  ) {
    const { budgets } = await context(c.var.signedIn.team.id);
    return c.html(
      <PoolFormPage
        signedIn={c.var.signedIn}
        pool={existing}
        budgets={budgets}
        values={withoutSecretKeys(values)}
        errors={errors}
      />,
      status,
    );
  }

  async function save(c: DashboardContext, existing: PoolRecord | null) {
    const teamId = c.var.signedIn.team.id;
    const { values, secrets } = readPoolForm(await readForm(c));
    const { pools, budgets } = await context(teamId);
    const checked = checkPoolForm(values, secrets, { existing, pools, budgets });
    if ("errors" in checked) return page(c, existing, values, checked.errors, 422);
    const sealed = sealPlannedSecrets(deps.catalog, checked.plan, existing);
    if ("errors" in sealed) return page(c, existing, values, sealed.errors, 422);
    try {
      // The version check and the write in one transaction: nobody's save slips in between.
      await store.atomically(async (tx) => {
        const current = await tx.getPoolBySubdomain(teamId, checked.plan.input.subdomain);
        if (
          existing
            ? current?.updatedAt !== existing.updatedAt ||
              values.version !== String(existing.updatedAt)
            : current
        ) {
          throw new ConflictError(
            existing ? CHANGED_SINCE_OPENED : "The team has a pool with this subdomain already.",
          );
        }
        await tx.upsertPool(teamId, {
          ...checked.plan.input,
          credential: sealed.credential,
          database: sealed.database,
        });
      });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const field = existing || !error.message.startsWith("The team") ? "" : "subdomain";
      return page(c, existing, values, { [field]: [error.message] }, 409);
    }
    await applyToGovernor(deps);
    return c.redirect(`/pool/${checked.plan.input.subdomain}`, 303);
  }

  routes.get("/pool/new", (c) => page(c, null, poolFormValues(null)));
  routes.post("/pool", (c) => save(c, null));

  routes.get("/pool/:pool/edit", async (c) => {
    const pool = await store.getPoolBySubdomain(c.var.signedIn.team.id, c.req.param("pool"));
    if (!pool) return c.notFound();
    return page(c, pool, poolFormValues(pool));
  });

  routes.post("/pool/:pool/edit", async (c) => {
    const pool = await store.getPoolBySubdomain(c.var.signedIn.team.id, c.req.param("pool"));
    if (!pool) return c.notFound();
    // The version the form was opened at, not the pool as it is now, is what the save checks.
    return save(c, pool);
  });

  routes.post("/pool/:pool/delete", async (c) => {
    const teamId = c.var.signedIn.team.id;
    const pool = await store.getPoolBySubdomain(teamId, c.req.param("pool"));
    if (!pool) return c.notFound();
    if (formText(await readForm(c), "confirmDelete").trim() !== pool.subdomain) {
      const refused = { confirmDelete: [`Type ${pool.subdomain} to delete this pool.`] };
      return page(c, pool, poolFormValues(pool), refused, 422);
    }
    await store.deletePool(teamId, pool.id);
    await applyToGovernor(deps);
    return c.redirect("/", 303);
  });
  return routes;
}
