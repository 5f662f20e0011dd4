import { Layout } from "./layout.js";

/** Email and password, back to `next` afterwards. */
export function SignInPage(props: { next: string; email?: string; error?: string }) {
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      {props.error ? <p class="notice bad error">{props.error}</p> : null}
      <form class="stack" method="post" action="/sign-in">
        <input type="hidden" name="next" value={props.next} />
        <label>
          <span>Email</span>
          <input
            type="email"
            name="email"
            value={props.email ?? ""}
            required
            autocomplete="username"
          />
        </label>
        <label>
          <span>Password</span>
          <input type="password" name="password" required autocomplete="current-password" />
        </label>
        <div class="actions">
          <button type="submit">Sign in</button>
        </div>
      </form>
      <p class="muted">
        No password yet? Use a one-time link: <code>sluice serve</code> prints one for a team
        without passwords, and <code>sluice user sign-in-link --email you@example.com</code> prints
        one any time (once signed in with it, reload this page to go on). Or set a password with{" "}
        <code>sluice user set-password --email you@example.com</code>.
      </p>
    </Layout>
  );
}

/** The one-time link's landing page: a button posts the token (a GET never uses it up). */
export function SignInLinkPage(props: { token: string; error?: string }) {
  return (
    <Layout title="Sign in with a link">
      <h1>Sign in with a one-time link</h1>
      {props.error ? (
        <>
          <p class="notice bad error">{props.error}</p>
          <p>
            Print a new link with <code>sluice user sign-in-link --email you@example.com</code>, or{" "}
            <a href="/sign-in">sign in with a password</a>.
          </p>
        </>
      ) : (
        <form class="stack" method="post" action="/sign-in/link">
          <input type="hidden" name="token" value={props.token} />
          <p>This link signs you in once, within 15 minutes of being made. Then set a password.</p>
          <div class="actions">
            <button type="submit">Continue</button>
          </div>
        </form>
      )}
    </Layout>
  );
}
