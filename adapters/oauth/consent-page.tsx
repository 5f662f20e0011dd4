import type { AuthorizationRequest } from "./authorization-request.js";
import { PageLayout } from "./page-layout.js";
import { type OAuthScope, SCOPE_DESCRIPTIONS } from "./scopes.js";

/** What the consent page shows besides the request. */
export interface ConsentView {
  request: AuthorizationRequest;
  /** Sealed form token (see ConsentTickets). */
  ticket: string;
  userName: string;
  teamName: string;
  /** The requested scopes the user's role lets them grant. */
  granted: OAuthScope[];
  /** The requested scopes the user's role does not allow (shown, not granted). */
  withheld: OAuthScope[];
}

/**
 * The consent page of `GET /oauth/authorize`: names the application (and, for an application
 * known by its metadata URL, that URL's host, which it cannot fake), where it will be sent
 * back to, and each scope; Allow and Deny post the signed ticket back.
 *
 * @example
 * ```tsx
 * htmlPage(c, <ConsentPage {...view} />)
 * ```
 */
export function ConsentPage(props: ConsentView) {
  const { request } = props;
  const redirectHost = new URL(request.redirectUri).host;
  return (
    <PageLayout title="Authorize an application">
      <h1>
        Allow <strong>{request.clientName}</strong> to use Sluice?
      </h1>
      <p>
        Signed in as <strong>{props.userName}</strong> in <strong>{props.teamName}</strong>.
      </p>
      {request.clientKind === "metadata-document" ? (
        <p class="muted">
          Application identified by <code>{new URL(request.clientId).host}</code>.
        </p>
      ) : (
        <p class="muted">Application registered itself with this server.</p>
      )}
      <p>
        After you answer you will be sent back to <code>{redirectHost}</code>.
      </p>
      <p>It will be able to:</p>
      <ul>
        {props.granted.map((scope) => (
          <li>
            {SCOPE_DESCRIPTIONS[scope]} <span class="muted">({scope})</span>
          </li>
        ))}
      </ul>
      {props.withheld.length > 0 && (
        <p class="muted">
          Also asked for, but your role does not allow it: {props.withheld.join(", ")}.
        </p>
      )}
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="ticket" value={props.ticket} />
        <div class="actions">
          <button type="submit" name="decision" value="approve" class="primary">
            Allow
          </button>
          <button type="submit" name="decision" value="deny">
            Deny
          </button>
        </div>
      </form>
    </PageLayout>
  );
}
