import { PageLayout } from "./page-layout.js";
import type { OAuthGrantRecord } from "./types.js";

function when(epochMs: number | null): string {
  return epochMs === null ? "never" : new Date(epochMs).toISOString().replace(/\.\d+Z$/, "Z");
}

/**
 * "Connected apps": the signed-in user's grants in their team (application, where it
 * redirects, scopes, created, last used), each with a Revoke button that takes effect at once.
 *
 * @example
 * ```tsx
 * htmlPage(c, <ConnectedAppsPage grants={grants} />)
 * ```
 */
export function ConnectedAppsPage(props: { grants: OAuthGrantRecord[]; notice?: string }) {
  return (
    <PageLayout title="Connected apps">
      <h1>Connected apps</h1>
      {props.notice && <p role="status">{props.notice}</p>}
      {props.grants.length === 0 ? (
        <p>No application has access to your account in this team.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Application</th>
              <th>Scopes</th>
              <th>Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.grants.map((grant) => (
              <tr>
                <td>
                  {grant.clientName}
                  <div class="muted">
                    {grant.redirectHost} · since {when(grant.createdAt)}
                  </div>
                </td>
                <td>{grant.scopes.join(", ")}</td>
                <td>{when(grant.lastUsedAt)}</td>
                <td>
                  <form method="post" action={`/oauth/connected-apps/${grant.id}/revoke`}>
                    <button type="submit">Revoke</button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </PageLayout>
  );
}
