import type { SignedIn } from "../../../src/auth/auth-service.js";
import type { CreatedApiToken } from "../../../src/catalog/tokens.js";
import { ABILITIES, type ApiTokenRecord } from "../../../src/catalog/types.js";
import type { FieldErrorMap } from "../forms.js";
import { Field, FieldErrors, FormErrors, formatTime, Layout, Secret } from "./layout.js";

const LIFETIMES = [
  ["1m", "1 month"],
  ["6m", "6 months"],
  ["1y", "1 year"],
] as const;

function tokenState(token: ApiTokenRecord, now: number): string {
  if (token.revokedAt !== null) return "revoked";
  return now >= token.expiresAt ? "expired" : "active";
}

/** Organization settings → API tokens. */
export function TokensPage(props: {
  signedIn: SignedIn;
  tokens: ApiTokenRecord[];
  creators: Map<number, string>;
  now: number;
  created?: CreatedApiToken;
  errors?: FieldErrorMap;
}) {
  const manager = props.signedIn.role !== "member";
  return (
    <Layout title="API tokens" signedIn={props.signedIn}>
      <h1>API tokens</h1>
      <p class="muted">
        A token calls the Control API (<code>/api/v1</code>) as the person who created it, with the
        abilities chosen here.
      </p>
      {props.created ? (
        <section class="card" id="created-token">
          <h2>New token "{props.created.token.name}": copy it now</h2>
          <p class="notice">
            This is the only time it is shown. Send it as Authorization: Bearer &lt;token&gt;.
          </p>
          <Secret id="token-plaintext" label="Token" value={props.created.plaintext} />
        </section>
      ) : null}
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Abilities</th>
            <th>Created by</th>
            <th>Last used</th>
            <th>Expires</th>
            <th>State</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {props.tokens.length === 0 ? (
            <tr>
              <td colspan={7} class="muted">
                No tokens yet.
              </td>
            </tr>
          ) : null}
          {props.tokens.map((token) => {
            const state = tokenState(token, props.now);
            return (
              <tr data-token-id={String(token.id)}>
                <td>{token.name}</td>
                <td>{token.abilities.join(", ")}</td>
                <td>{props.creators.get(token.userId)}</td>
                <td>{formatTime(token.lastUsedAt)}</td>
                <td>{formatTime(token.expiresAt)}</td>
                <td>{state}</td>
                <td>
                  {manager && state === "active" ? (
                    <form
                      method="post"
                      action={`/settings/tokens/${token.id}/revoke`}
                      class="inline"
                    >
                      <button type="submit" class="danger">
                        Revoke
                      </button>
                    </form>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {manager ? (
        <section class="card">
          <h2>Create a token</h2>
          <form class="stack" method="post" action="/settings/tokens">
            <FormErrors errors={props.errors} />
            <Field label="Name" name="name" errors={props.errors} required />
            <fieldset>
              <legend>Abilities</legend>
              {ABILITIES.map((ability) => (
                <label class="check">
                  <input type="checkbox" name="abilities" value={ability} />
                  <span>{ability}</span>
                </label>
              ))}
              <FieldErrors errors={props.errors} name="abilities" />
            </fieldset>
            <label>
              <span>Expires after</span>
              <select name="lifetime">
                {LIFETIMES.map(([value, label]) => (
                  <option value={value}>{label}</option>
                ))}
              </select>
              <FieldErrors errors={props.errors} name="lifetime" />
            </label>
            <div class="actions">
              <button type="submit">Create token</button>
            </div>
          </form>
        </section>
      ) : (
        <p class="muted">Only owners and admins create and revoke tokens.</p>
      )}
    </Layout>
  );
}
