import type { SignedIn } from "../../../src/auth/auth-service.js";
import type { Role, UserRecord } from "../../../src/catalog/types.js";
import type { FieldErrorMap } from "../forms.js";
import { Field, FieldErrors, FormErrors, Layout } from "./layout.js";

/** A member as the page lists them. */
export interface MemberRow {
  user: UserRecord;
  role: Role;
}

const ROLES: readonly Role[] = ["owner", "admin", "member"];

function RoleSelect(props: { selected: string; label: string; roles: readonly Role[] }) {
  return (
    <select name="role" aria-label={props.label}>
      {props.roles.map((role) => (
        <option value={role} selected={props.selected === role}>
          {role}
        </option>
      ))}
    </select>
  );
}

/** A refused role change or removal, shown in the row of the member it was about. */
export interface MemberRowErrors {
  userId: number;
  errors: FieldErrorMap;
}

function RowErrors(props: { userId: number; refused: MemberRowErrors | undefined }) {
  if (props.refused?.userId !== props.userId) return null;
  const messages = Object.values(props.refused.errors).flat();
  if (messages.length === 0) return null;
  return (
    <span class="field-error" id={`error-member-${props.userId}`}>
      {" "}
      {messages.join(" ")}
    </span>
  );
}

/**
 * Organization settings → members. `errors` are the add form's, shown at its fields;
 * `rowErrors` a refused change of one listed member, shown in their row.
 */
export function MembersPage(props: {
  signedIn: SignedIn;
  members: MemberRow[];
  errors?: FieldErrorMap | undefined;
  rowErrors?: MemberRowErrors | undefined;
  added?: { name: string; email: string; role: string } | undefined;
}) {
  const manager = props.signedIn.role !== "member";
  // Only an owner makes, changes or removes owners: an admin is not offered what would be
  // refused (403) on submit.
  const isOwner = props.signedIn.role === "owner";
  const offered = isOwner ? ROLES : ROLES.filter((role) => role !== "owner");
  const canChange = (role: Role) => manager && (isOwner || role !== "owner");
  return (
    <Layout title="Members" signedIn={props.signedIn}>
      <h1>Members of {props.signedIn.team.name}</h1>
      <p class="muted">
        Owners and admins change budgets, pools, keys, tokens and members; members see everything
        and change nothing. Removing someone, or lowering them to member, ends their sessions and
        revokes their API tokens at once.
      </p>
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Role</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {props.members.map(({ user, role }) => (
            <tr data-user-id={String(user.id)}>
              <td>{user.name}</td>
              <td>{user.email}</td>
              <td>
                {canChange(role) ? (
                  <form method="post" action={`/settings/members/${user.id}/role`} class="inline">
                    <RoleSelect selected={role} label={`Role of ${user.email}`} roles={offered} />{" "}
                    <button type="submit">Change role</button>
                  </form>
                ) : (
                  role
                )}
                <RowErrors userId={user.id} refused={props.rowErrors} />
              </td>
              <td>
                {canChange(role) ? (
                  <form method="post" action={`/settings/members/${user.id}/remove`} class="inline">
                    <button type="submit" class="danger">
                      Remove
                    </button>
                  </form>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {manager ? (
        <section class="card">
          <h2>Add a member</h2>
          <FormErrors errors={props.errors} />
          <form class="stack" method="post" action="/settings/members">
            <Field
              label="Name"
              name="name"
              value={props.added?.name}
              errors={props.errors}
              required
            />
            <Field
              label="Email"
              name="email"
              type="email"
              value={props.added?.email}
              errors={props.errors}
              required
            />
            <div>
              Role{" "}
              <RoleSelect selected={props.added?.role ?? "member"} label="Role" roles={offered} />{" "}
              <FieldErrors errors={props.errors} name="role" />
            </div>
            <p class="muted">
              They sign in once they have a password:{" "}
              <code>sluice user set-password --email …</code>
            </p>
            <div class="actions">
              <button type="submit">Add member</button>
            </div>
          </form>
        </section>
      ) : null}
    </Layout>
  );
}
