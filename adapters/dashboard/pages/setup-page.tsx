import type { FieldErrorMap } from "../forms.js";
import { Field, FormErrors, Layout, NewPasswordFields } from "./layout.js";

/** What the setup form was sent with (kept when it comes back with errors; never the password). */
export interface SetupValues {
  teamName?: string;
  slug?: string;
  ownerName?: string;
  ownerEmail?: string;
}

/** First run: the team and its owner (you), from the link `sluice serve` prints. */
export function SetupPage(props: { token: string; values?: SetupValues; errors?: FieldErrorMap }) {
  const values = props.values ?? {};
  return (
    <Layout title="Set up Sluice">
      <h1>Set up Sluice</h1>
      <p>
        Create your team (organization) and your own account as its owner. You can add people
        afterwards under Members.
      </p>
      <FormErrors errors={props.errors} />
      <form class="stack" method="post" action="/setup">
        <input type="hidden" name="token" value={props.token} />
        <Field
          label="Team name"
          name="teamName"
          value={values.teamName}
          errors={props.errors}
          required
        />
        <Field
          label="Team slug"
          name="slug"
          value={values.slug}
          errors={props.errors}
          hint="Short unique id: lower-case letters, digits, hyphens."
          required
        />
        <Field
          label="Your name"
          name="ownerName"
          value={values.ownerName}
          errors={props.errors}
          required
        />
        <Field
          label="Your email"
          name="ownerEmail"
          type="email"
          value={values.ownerEmail}
          errors={props.errors}
          required
        />
        <NewPasswordFields label="Password" errors={props.errors} />
        <div class="actions">
          <button type="submit">Create team</button>
        </div>
      </form>
    </Layout>
  );
}
