import type { SignedIn } from "../../../src/auth/auth-service.js";
import { budgetUnallocated } from "../../../src/catalog/governor-mapping.js";
import type { BudgetRecord, PoolRecord } from "../../../src/catalog/types.js";
import type { BudgetForm } from "../budget-form.js";
import type { FieldErrorMap } from "../forms.js";
import { Field, FieldErrors, FormErrors, Layout } from "./layout.js";

/** Create or edit a budget and its member pools. */
export function BudgetPage(props: {
  signedIn: SignedIn;
  budget: BudgetRecord | null;
  pools: PoolRecord[];
  form: BudgetForm;
  errors?: FieldErrorMap;
}) {
  const { budget, form, errors } = props;
  const title = budget ? `Budget ${budget.name}` : "New budget";
  return (
    <Layout title={title} signedIn={props.signedIn}>
      <h1>{title}</h1>
      {budget ? (
        <p class="muted">
          {budget.originMaxConcurrent === null
            ? "No shared ceiling."
            : `Unallocated: ${budgetUnallocated(budget, props.pools)} of ${budget.originMaxConcurrent}.`}
        </p>
      ) : null}
      <FormErrors errors={errors} />
      <form class="stack" method="post" action={budget ? `/budget/${budget.id}` : "/budget"}>
        <input type="hidden" name="version" value={form.version} />
        <Field label="Name" name="name" value={form.name} errors={errors} required />
        <Field
          label="Origin max concurrent (shared ceiling)"
          name="originMaxConcurrent"
          type="number"
          value={form.originMaxConcurrent}
          errors={errors}
          hint="Leave empty for no shared ceiling. Reservations of member pools must fit under it."
        />
        <fieldset>
          <legend>Member pools</legend>
          {props.pools.length === 0 ? <p class="muted">The team has no pools yet.</p> : null}
          <table>
            <thead>
              <tr>
                <th>In this budget</th>
                <th>Pool</th>
                <th>Now in</th>
                <th>Reserved concurrent</th>
              </tr>
            </thead>
            <tbody>
              {props.pools.map((pool) => (
                <tr>
                  <td>
                    <input
                      type="checkbox"
                      name={`member-${pool.id}`}
                      value="on"
                      checked={form.members.has(pool.id)}
                      aria-label={`${pool.subdomain} in this budget`}
                    />
                  </td>
                  <td>
                    {pool.name} <span class="muted">{pool.subdomain}</span>
                  </td>
                  <td class="muted">
                    {pool.budgetId === null
                      ? "no budget"
                      : pool.budgetId === budget?.id
                        ? "this budget"
                        : "another budget"}
                  </td>
                  <td>
                    <input
                      type="number"
                      min="0"
                      name={`reserved-${pool.id}`}
                      value={form.members.get(pool.id) ?? "0"}
                      aria-label={`${pool.subdomain} reserved concurrent`}
                    />
                    <FieldErrors errors={errors} name={`reserved-${pool.id}`} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </fieldset>
        <div class="actions">
          <button type="submit">{budget ? "Save budget" : "Create budget"}</button>
          <a href="/">Cancel</a>
        </div>
      </form>
      {budget ? (
        <form method="post" action={`/budget/${budget.id}/delete`} class="actions">
          <button type="submit" class="danger">
            Delete budget
          </button>
          <span class="muted">Only a budget without pools can be deleted.</span>
        </form>
      ) : null}
    </Layout>
  );
}
