import type { Child } from "hono/jsx";
import type { SignedIn } from "../../../src/auth/auth-service.js";
import { PASSWORD_MIN_LENGTH } from "../../../src/auth/passwords.js";
import { assetUrl } from "../assets.js";

/** htmx settings that keep it inside the CSP: no injected style, no eval, no inline scripts. */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
});

/**
 * The page frame: head with the dashboard's assets, the navigation for a signed-in person.
 *
 * @example
 * ```tsx
 * c.html(<Layout title="Overview" signedIn={c.var.signedIn}>…</Layout>);
 * ```
 */
export function Layout(props: {
  title: string;
  signedIn?: SignedIn;
  chart?: boolean;
  children?: Child;
}) {
  const who = props.signedIn;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        {/* No icon: without this the browser asks for /favicon.ico on every page (a 404). */}
        <link rel="icon" href="data:," />
        <title>{`${props.title} · Sluice`}</title>
        <link rel="stylesheet" href={assetUrl("dashboard.css")} />
        {props.chart ? <link rel="stylesheet" href={assetUrl("uPlot.min.css")} /> : null}
        <script src={assetUrl("htmx.min.js")} defer></script>
        {props.chart ? <script src={assetUrl("uPlot.iife.min.js")} defer></script> : null}
        <script src={assetUrl("dashboard.js")} defer></script>
      </head>
      <body>
        <header class="top">
          <span class="brand">Sluice</span>
          {who ? (
            <>
              <nav>
                <a href="/">Overview</a>
                <a href="/settings/tokens">API tokens</a>
                <a href="/settings/members">Members</a>
                <a href="/oauth/connected-apps">Connected apps</a>
                <a href="/account">Account</a>
              </nav>
              <span class="muted">
                {who.user.name} · <a href="/account#teams">{who.team.name}</a> ({who.role})
              </span>
              <form method="post" action="/sign-out">
                <button type="submit">Sign out</button>
              </form>
            </>
          ) : null}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** A field's error messages, under the field. */
export function FieldErrors(props: { errors: Record<string, string[]> | undefined; name: string }) {
  const messages = props.errors?.[props.name];
  if (!messages || messages.length === 0) return null;
  return (
    <span class="field-error" id={`error-${props.name}`}>
      {messages.join(" ")}
    </span>
  );
}

/** Errors that belong to no single field (the whole form, or a rule across fields). */
export function FormErrors(props: { errors: Record<string, string[]> | undefined }) {
  const messages = props.errors?.[""];
  if (!messages || messages.length === 0) return null;
  return <p class="notice bad error">{messages.join(" ")}</p>;
}

/** A labelled input with its errors. */
export function Field(props: {
  label: string;
  name: string;
  value?: string | number | null | undefined;
  type?: string;
  errors?: Record<string, string[]> | undefined;
  hint?: string;
  required?: boolean;
  readonly?: boolean;
  placeholder?: string;
}) {
  return (
    <label>
      <span>{props.label}</span>
      <input
        type={props.type ?? "text"}
        name={props.name}
        value={props.value === null || props.value === undefined ? "" : String(props.value)}
        required={props.required}
        readonly={props.readonly}
        placeholder={props.placeholder}
        aria-invalid={props.errors?.[props.name] ? "true" : undefined}
      />
      {props.hint ? <small class="muted">{props.hint}</small> : null}
      <FieldErrors errors={props.errors} name={props.name} />
    </label>
  );
}

/**
 * A labelled checkbox posting "on" when checked (absent when not), checked from `values`.
 *
 * @example
 * ```tsx
 * <Check name="adaptive" label="Adaptive" values={{ adaptive: "on" }} />
 * ```
 */
export function Check(props: {
  name: string;
  label: string;
  values: Record<string, string>;
  hint?: string;
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        name={props.name}
        value="on"
        checked={props.values[props.name] === "on"}
      />
      <span>
        {props.label} {props.hint ? <small class="muted">{props.hint}</small> : null}
      </span>
    </label>
  );
}

/** A new password, typed twice (`password`, `repeat`); checked by `passwordsDiffer`. */
export function NewPasswordFields(props: { label: string; errors?: Record<string, string[]> }) {
  return (
    <>
      <Field
        label={props.label}
        name="password"
        type="password"
        errors={props.errors}
        hint={`At least ${PASSWORD_MIN_LENGTH} characters.`}
        required
      />
      <Field label="Repeat it" name="repeat" type="password" errors={props.errors} required />
    </>
  );
}

/** A one-time secret with a copy button (the button needs the page's script; the text is selectable anyway). */
export function Secret(props: { id: string; label: string; value: string }) {
  return (
    <p>
      {props.label}:{" "}
      <code class="secret" id={props.id}>
        {props.value}
      </code>{" "}
      <button type="button" data-copy={props.id}>
        Copy
      </button>
    </p>
  );
}

/** A date for people (UTC, to the minute). */
export function formatTime(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined || epochMs === 0) return "—";
  return `${new Date(epochMs).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
