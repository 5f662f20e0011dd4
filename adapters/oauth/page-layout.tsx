import type { Context } from "hono";
import type { Child } from "hono/jsx";

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1c2330}
main{max-width:34rem;margin:3rem auto;background:#fff;border:1px solid #d9dde3;border-radius:8px;padding:1.5rem 2rem}
h1{font-size:1.35rem;margin:0 0 1rem}
ul{padding-left:1.2rem}
code{background:#eef0f3;padding:0 .25rem;border-radius:3px}
.muted{color:#5b6573;font-size:.9rem}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{font:inherit;padding:.5rem 1.1rem;border-radius:6px;border:1px solid #aab2bd;background:#fff;cursor:pointer}
button.primary{background:#1f5eff;border-color:#1f5eff;color:#fff}
table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.4rem .3rem;border-bottom:1px solid #e4e7eb;vertical-align:top}
`;

/** Security headers of every page here: no framing (clickjacking of consent), no scripts. */
const PAGE_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
} as const;

/**
 * Answers a page (standards mode, with the security headers above).
 *
 * @example
 * ```tsx
 * return htmlPage(c, <ErrorPage title="Not found" message="No such connected app." />, 404);
 * ```
 */
export function htmlPage(c: Context, page: Child, status: 200 | 400 | 404 | 413 = 200) {
  return c.html(`<!DOCTYPE html>${page}`, status, PAGE_HEADERS);
}

/**
 * The small, self-contained page frame of the authorization pages (consent, errors,
 * connected apps): no scripts, inline style only.
 *
 * @example
 * ```tsx
 * <PageLayout title="Authorize">…</PageLayout>
 * ```
 */
export function PageLayout(props: { title: string; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Sluice`}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/**
 * A page for an authorization request that cannot go back to its client (unknown client,
 * unregistered redirect URI), or should not by itself (a refused request whose redirect URI is
 * not on this machine, offered as a link): the person is told why instead of being redirected.
 *
 * @example
 * ```tsx
 * htmlPage(c, <ErrorPage title="Unknown application" message="…" />, 400)
 * ```
 */
export function ErrorPage(props: {
  title: string;
  message: string;
  /** The application's redirect URI with the error, offered as a link (never followed alone). */
  back?: { url: string; host: string };
}) {
  return (
    <PageLayout title={props.title}>
      <h1>{props.title}</h1>
      <p>{props.message}</p>
      {props.back && (
        <p>
          <a href={props.back.url}>Return to {props.back.host}</a>{" "}
          <span class="muted">(the application is told why)</span>
        </p>
      )}
      <p class="muted">Nothing was shared. You can close this page.</p>
    </PageLayout>
  );
}
