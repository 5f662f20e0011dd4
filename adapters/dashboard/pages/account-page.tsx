import type { SignedIn } from "../../../src/auth/auth-service.js";
import type { Role, TeamRecord } from "../../../src/catalog/types.js";
import type { FieldErrorMap } from "../forms.js";
import { Layout, NewPasswordFields } from "./layout.js";

/** The signed-in person's account: their teams (switch), password and sessions. */
export function AccountPage(props: {
  signedIn: SignedIn;
  /** Every team the person belongs to, this one included. */
  teams: { team: TeamRecord; role: Role }[];
  hasPassword: boolean;
  welcome?: boolean;
  saved?: boolean;
  /** Sessions in other browsers ended by the new password. */
  endedSessions?: number;
  errors?: FieldErrorMap;
}) {
  const { user } = props.signedIn;
  return (
    <Layout title="Account" signedIn={props.signedIn}>
      <h1>Account</h1>
      <p>
        {user.name} &lt;{user.email}&gt;
      </p>
      {props.welcome && !props.hasPassword ? (
        <p class="notice">
          Signed in with the one-time link. Set a password now: the link works only once.
        </p>
      ) : null}
      {props.saved ? (
        <p class="notice">
          Password saved.
          {props.endedSessions
            ? ` Signed out ${props.endedSessions} other session${props.endedSessions === 1 ? "" : "s"}.`
            : ""}
        </p>
      ) : null}
      <TeamsSection signedIn={props.signedIn} teams={props.teams} />
      <section class="card">
        <h2>{props.hasPassword ? "Change password" : "Set a password"}</h2>
        <form class="stack" method="post" action="/account/password">
          <NewPasswordFields label="New password" errors={props.errors} />
          <div class="actions">
            <button type="submit">Save password</button>
          </div>
        </form>
      </section>
      <section class="card">
        <h2>Sessions</h2>
        <p>Signs you out in every browser, this one included.</p>
        <form method="post" action="/account/sign-out-everywhere">
          <button type="submit">Sign out everywhere</button>
        </form>
      </section>
    </Layout>
  );
}

/** The person's teams; each other one has a button that moves this session there. */
function TeamsSection(props: { signedIn: SignedIn; teams: { team: TeamRecord; role: Role }[] }) {
  const current = props.signedIn.team.id;
  return (
    <section class="card" id="teams">
      <h2>Teams</h2>
      <table>
        <thead>
          <tr>
            <th>Team</th>
            <th>Your role</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {props.teams.map(({ team, role }) => (
            <tr>
              <td>{team.name}</td>
              <td>{role}</td>
              <td>
                {team.id === current ? (
                  <span class="muted">Signed in here</span>
                ) : (
                  <form method="post" action="/account/team">
                    <input type="hidden" name="team" value={String(team.id)} />
                    <button type="submit">Switch to {team.name}</button>
                  </form>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
