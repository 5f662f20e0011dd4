import type { SignedIn } from "../../../src/auth/auth-service.js";
import type { BudgetRecord, PoolRecord } from "../../../src/catalog/types.js";
import type { FieldErrorMap } from "../forms.js";
import type { PoolFormValues } from "../pool-form.js";
import { CallerPolicyFields } from "./caller-policy-fields.js";
import { Check, Field, FieldErrors, FormErrors, Layout } from "./layout.js";

function CredentialFields(props: {
  pool: PoolRecord | null;
  values: PoolFormValues;
  errors?: FieldErrorMap;
}) {
  const { pool, values, errors } = props;
  return (
    <fieldset>
      <legend>Managed upstream credential</legend>
      <p class="muted">
        Sent to the origin on every proxied request; callers never see it. It is stored encrypted
        and never shown again.
      </p>
      {pool ? (
        <>
          <p>
            {pool.credential
              ? `A credential is set (header ${pool.credential.header}).`
              : "No credential is set."}
          </p>
          <label class="check">
            <input
              type="radio"
              name="credentialAction"
              value="keep"
              checked={values.credentialAction !== "replace" && values.credentialAction !== "clear"}
            />
            <span>Keep as it is</span>
          </label>
          <label class="check">
            <input
              type="radio"
              name="credentialAction"
              value="replace"
              checked={values.credentialAction === "replace"}
            />
            <span>Replace with the value below</span>
          </label>
          <label class="check">
            <input
              type="radio"
              name="credentialAction"
              value="clear"
              checked={values.credentialAction === "clear"}
            />
            <span>Remove it</span>
          </label>
          <FieldErrors errors={errors} name="credentialAction" />
        </>
      ) : null}
      <Field
        label="Header"
        name="credentialHeader"
        value={values.credentialHeader}
        errors={errors}
        hint="authorization, x-api-key, …"
      />
      <label>
        <span>Value</span>
        <input
          type="password"
          name="credentialValue"
          value=""
          autocomplete="off"
          placeholder={pool ? "(unchanged unless you replace it)" : "(none)"}
        />
        <FieldErrors errors={errors} name="credentialValue" />
      </label>
    </fieldset>
  );
}

function DatabaseFields(props: {
  pool: PoolRecord | null;
  values: PoolFormValues;
  errors?: FieldErrorMap | undefined;
}) {
  const { pool, values, errors } = props;
  return (
    <fieldset>
      <legend>Database (postgres pools only)</legend>
      <p class="muted">
        The read role a postgres pool queries as. Its connection string holds a password: it is
        stored encrypted and never shown again.
      </p>
      {pool?.database ? (
        <p>A connection is set ({pool.origin}). Leave the field empty to keep it.</p>
      ) : null}
      <label>
        <span>Connection string</span>
        <input
          type="password"
          name="databaseConnection"
          value=""
          autocomplete="off"
          placeholder="postgres://reader:password@host:5432/database"
        />
        <FieldErrors errors={errors} name="databaseConnection" />
      </label>
      <Field
        label="Max rows"
        name="database.maxRows"
        type="number"
        value={values["database.maxRows"]}
        errors={errors}
      />
      <Field
        label="Max result bytes"
        name="database.maxResultBytes"
        type="number"
        value={values["database.maxResultBytes"]}
        errors={errors}
      />
      <Field
        label="Statement timeout (ms)"
        name="database.statementTimeoutMs"
        type="number"
        value={values["database.statementTimeoutMs"]}
        errors={errors}
      />
    </fieldset>
  );
}

/** Create or edit a pool: every field an apply file knows. */
export function PoolFormPage(props: {
  signedIn: SignedIn;
  pool: PoolRecord | null;
  budgets: BudgetRecord[];
  values: PoolFormValues;
  errors?: FieldErrorMap | undefined;
}) {
  const { pool, values, errors } = props;
  const title = pool ? `Edit pool ${pool.name}` : "New pool";
  return (
    <Layout title={title} signedIn={props.signedIn}>
      <h1>{title}</h1>
      <FormErrors errors={errors} />
      <form class="stack" method="post" action={pool ? `/pool/${pool.subdomain}/edit` : "/pool"}>
        <input type="hidden" name="version" value={values.version} />
        <Field label="Name" name="name" value={values.name} errors={errors} required />
        <Field label="Description" name="description" value={values.description} errors={errors} />
        {pool ? (
          <p>
            Subdomain: <code>{pool.subdomain}</code>{" "}
            <small class="muted">(fixed: keys and URLs use it)</small>
          </p>
        ) : (
          <Field
            label="Subdomain"
            name="subdomain"
            value={values.subdomain}
            errors={errors}
            hint="Lower-case letters, digits and inner hyphens; the pool's host name and path segment."
            required
          />
        )}
        <label>
          <span>Backend</span>
          <select name="backend">
            <option value="http" selected={values.backend !== "postgres"}>
              http
            </option>
            <option value="postgres" selected={values.backend === "postgres"}>
              postgres
            </option>
          </select>
          <FieldErrors errors={errors} name="backend" />
        </label>
        <Field
          label="Origin"
          name="origin"
          type="url"
          value={values.origin}
          errors={errors}
          hint="http pools: the upstream's base URL, e.g. https://api.openai.com (a postgres pool has none)"
        />
        <fieldset>
          <legend>Limits</legend>
          <Field
            label="Max concurrent"
            name="maxConcurrent"
            type="number"
            value={values.maxConcurrent}
            errors={errors}
            required
          />
          <Field
            label="Queue size"
            name="queue.size"
            type="number"
            value={values["queue.size"]}
            errors={errors}
          />
          <Field
            label="Queue timeout (ms)"
            name="queue.timeoutMs"
            type="number"
            value={values["queue.timeoutMs"]}
            errors={errors}
          />
          <Field
            label="Requests per minute"
            name="rpm"
            type="number"
            value={values.rpm}
            errors={errors}
            hint="Empty for no RPM gate."
          />
          <Field
            label="Request timeout (ms)"
            name="requestTimeoutMs"
            type="number"
            value={values.requestTimeoutMs}
            errors={errors}
          />
          <Field
            label="Lease term (ms)"
            name="termMs"
            type="number"
            value={values.termMs}
            errors={errors}
          />
          <Field
            label="Renew interval (ms)"
            name="renewIntervalMs"
            type="number"
            value={values.renewIntervalMs}
            errors={errors}
          />
          <Check
            name="adaptive"
            label="Adaptive"
            values={values}
            hint="learn a lower limit from the upstream's 429s and rate headers"
          />
        </fieldset>
        <fieldset>
          <legend>Budget</legend>
          <label>
            <span>Budget</span>
            <select name="budgetId">
              <option value="" selected={values.budgetId === ""}>
                No budget
              </option>
              {props.budgets.map((budget) => (
                <option value={String(budget.id)} selected={values.budgetId === String(budget.id)}>
                  {budget.name}
                </option>
              ))}
            </select>
            <FieldErrors errors={errors} name="budgetId" />
          </label>
          <Field
            label="Reserved concurrent"
            name="reservedConcurrent"
            type="number"
            value={values.reservedConcurrent}
            errors={errors}
            hint="Slots of the budget's ceiling kept for this pool."
          />
        </fieldset>
        <fieldset>
          <legend>Callers</legend>
          <Check name="requireKey" label="Require a pool key" values={values} />
          <Check
            name="allowAuthorizationHeader"
            label="Accept the key in Authorization: Bearer"
            values={values}
          />
          <Check
            name="originSigning"
            label="Sign requests to the origin"
            values={values}
            hint="each key gets a signing secret"
          />
          <Field
            label="Extra read methods"
            name="readMethods"
            value={values.readMethods}
            errors={errors}
            hint="Methods read-only keys may use besides GET, HEAD, OPTIONS, e.g. POST, QUERY"
          />
          <label>
            <span>Read paths</span>
            <textarea name="readPaths" rows={3} placeholder="POST /v1/embeddings">
              {values.readPaths}
            </textarea>
            <small class="muted">
              One "METHOD /prefix" per line: narrows an extra read method to path prefixes.
            </small>
            <FieldErrors errors={errors} name="readPaths" />
          </label>
        </fieldset>
        <CallerPolicyFields values={values} errors={errors} />
        <CredentialFields pool={pool} values={values} errors={errors} />
        <DatabaseFields pool={pool} values={values} errors={errors} />
        <Field
          label="Metrics retention (days)"
          name="metricsRetentionDays"
          type="number"
          value={values.metricsRetentionDays}
          errors={errors}
        />
        <div class="actions">
          <button type="submit">{pool ? "Save pool" : "Create pool"}</button>
          <a href={pool ? `/pool/${pool.subdomain}` : "/"}>Cancel</a>
        </div>
      </form>
      {pool ? (
        <form method="post" action={`/pool/${pool.subdomain}/delete`} class="stack">
          <h2>Delete pool</h2>
          <p class="muted">
            Deletes its keys, metrics and access log; callers holding slots keep them until they
            release.
          </p>
          {/* One stray click must not end every caller's key: the subdomain confirms it. */}
          <Field
            label={`Type ${pool.subdomain} to confirm`}
            name="confirmDelete"
            errors={errors}
            required
          />
          <div class="actions">
            <button type="submit" class="danger">
              Delete pool
            </button>
          </div>
        </form>
      ) : null}
    </Layout>
  );
}
