import {
  ACCESS_OUTCOMES,
  type AccessLogEntry,
  type AccessOutcome,
} from "../../../src/access-log/types.js";
import type { SignedIn } from "../../../src/auth/auth-service.js";
import type { MintedPoolKey } from "../../../src/catalog/pool-keys.js";
import {
  KEY_EXPIRY_PRESETS,
  type PoolKeyRecord,
  type PoolRecord,
} from "../../../src/catalog/types.js";
import type { LearnerStatus } from "../../../src/learning/learner-status.js";
import type { FieldErrorMap } from "../forms.js";
import type { PoolFigures } from "../live-figures.js";
import { CHART_RANGES, type ChartRange } from "../pool-series.js";
import { CallerPolicySummary } from "./caller-policy-summary.js";
import { Field, FieldErrors, FormErrors, formatTime, Layout, Secret } from "./layout.js";

/** An access log entry with the label of its key. */
export interface AccessRow extends AccessLogEntry {
  keyLabel: string | null;
}

/** The live figures block; htmx refreshes it every 2 s from `/pool/<pool>/live`. */
export function LivePoolStatus(props: { pool: PoolRecord; figures: PoolFigures }) {
  const f = props.figures;
  return (
    <div
      class="figures"
      id="live-pool"
      hx-get={`/pool/${props.pool.subdomain}/live`}
      hx-trigger="every 2s"
      hx-swap="outerHTML"
    >
      <div>
        Held <b data-held={props.pool.subdomain}>{f.held}</b>
      </div>
      <div>
        Effective limit <b>{f.effectiveLimit}</b>
      </div>
      <div>
        Max <b>{f.maxConcurrent}</b>
      </div>
      <div>
        Queued <b>{f.queued}</b>
      </div>
      <div>
        RPM used <b>{`${f.rpmUsed}${f.rpmLimit === null ? "" : ` / ${f.rpmLimit}`}`}</b>
      </div>
      <div>
        Paused until <b>{f.pausedUntil > 0 ? formatTime(f.pausedUntil) : "—"}</b>
      </div>
      <div>
        Learned limit <b>{f.learnedLimit ?? "—"}</b>
      </div>
      {f.learner ? <NextProbe learner={f.learner} /> : null}
      {f.live ? null : <p class="muted">The governor does not run this pool yet.</p>}
    </div>
  );
}

/** The learner's probe above its limit: when it may come, and how often it failed there. */
function NextProbe(props: { learner: LearnerStatus }) {
  const { nextProbeLevel, nextProbeInMs, successesToNextProbe, failedProbes } = props.learner;
  const wait = nextProbeInMs ? `in ${Math.ceil(nextProbeInMs / 1000)} s` : "now";
  const successes = successesToNextProbe ? `, after ${successesToNextProbe} more successes` : "";
  return (
    <div>
      Next probe <b data-next-probe>{`to ${nextProbeLevel} ${wait}${successes}`}</b>
      <span class="muted">
        {failedProbes > 0 ? ` ${failedProbes} failed at this level` : " no failed probes"}
      </span>
    </div>
  );
}

function proxyOrigin(baseUrl: string, poolDomain: string, subdomain: string): string {
  const base = new URL(baseUrl);
  return `${base.protocol}//${subdomain}.${poolDomain}${base.port ? `:${base.port}` : ""}`;
}

/** The JWT header as a curl line sends it (`Authorization: Bearer $JWT` by default). */
function tokenHeaderLine(header: string): string {
  return header === "authorization" ? "Authorization: Bearer $JWT" : `${header}: $JWT`;
}

/** What the pool's caller policies ask of a request beyond its key, as shell comments. */
function policyNotes(policies: PoolRecord["callerPolicies"]): string[] {
  if (!policies) return [];
  const notes: string[] = [];
  if (policies.ipAllowlist) notes.push("# Only callers in the pool's IP allowlist are admitted.");
  if (policies.accessProxy) {
    notes.push(`# Requests must come through the access proxy (${policies.accessProxy.preset}).`);
  }
  if (policies.jwt) notes.push("# $JWT: a token from the pool's identity provider.");
  if (policies.hmac) {
    notes.push(
      "# Every acquire and proxied request must also be signed (x-svc-request-timestamp, -nonce,",
      "# -signature) with the key's request-signing secret: signLockRequest, or",
      "# examples/signed-acquire.sh for curl (docs/caller-policies.md).",
    );
  }
  return notes;
}

/**
 * The pool host's line: an http pool proxies any path to its origin; a postgres pool answers
 * only `POST /sql` (docs/postgres-pools.md), so a `/<path>` line would only get a 404.
 */
function proxyLines(
  host: string,
  backend: PoolRecord["backend"],
  headers: { keyHeader: string; proof: string },
): string[] {
  const { keyHeader, proof } = headers;
  if (backend === "postgres") {
    return [
      "# SQL over HTTP: Sluice runs the statement with the pool's read role, within its limits.",
      `curl -sS ${host}/sql${keyHeader}${proof} -H "Content-Type: application/json" -d '{"query": "SELECT 1"}'`,
    ];
  }
  return [
    "# Pool proxy: Sluice calls the origin for you within the pool's limits.",
    `curl -sS ${host}/<path>${keyHeader}${proof}`,
  ];
}

function CurlLines(props: {
  pool: PoolRecord;
  urls: { lockUrl: string; baseUrl: string; poolDomain: string };
}) {
  const { pool, urls } = props;
  const lock = `${urls.lockUrl}/pools/${pool.subdomain}/lock`;
  const keyHeader = pool.requireKey ? ' -H "X-Svc-Key: $SLUICE_KEY"' : "";
  const policies = pool.callerPolicies;
  // Taking a slot passes the pool's caller policies too: the lines say what they add, so a
  // line copied from here is not simply refused.
  const proof = policies?.jwt ? ` -H "${tokenHeaderLine(policies.jwt.header)}"` : "";
  const lines = [
    ...policyNotes(policies),
    "# Lock API: take a slot (waiting up to 5 s), call the upstream yourself, then release it.",
    `curl -sS -X POST ${lock}/acquire${keyHeader}${proof} -H "Content-Type: application/json" -d '{"waitMs": 5000}'`,
    `curl -sS -X POST ${lock}/<slotId>/release${keyHeader} -H "Content-Type: application/json" -d '{"status": 200}'`,
    ...proxyLines(`${proxyOrigin(urls.baseUrl, urls.poolDomain, pool.subdomain)}`, pool.backend, {
      keyHeader,
      proof,
    }),
  ];
  return (
    <pre id="curl-lines">
      <code>{lines.join("\n")}</code>
    </pre>
  );
}

function KeyRows(props: {
  pool: PoolRecord;
  keys: PoolKeyRecord[];
  manager: boolean;
  now: number;
}) {
  return (
    <table>
      <thead>
        <tr>
          <th>Label</th>
          <th>Key</th>
          <th>Access</th>
          <th>Created</th>
          <th>Expires</th>
          <th>State</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {props.keys.length === 0 ? (
          <tr>
            <td colspan={7} class="muted">
              No keys yet.
            </td>
          </tr>
        ) : null}
        {props.keys.map((key) => {
          const state =
            key.revokedAt !== null
              ? "revoked"
              : key.expiresAt !== null && key.expiresAt <= props.now
                ? "expired"
                : "active";
          return (
            <tr data-key-id={String(key.id)}>
              <td>{key.label || <span class="muted">(no label)</span>}</td>
              <td>
                <code>…{key.lastFour}</code>
              </td>
              <td>{key.access}</td>
              <td>{formatTime(key.createdAt)}</td>
              <td>{key.expiresAt === null ? "never" : formatTime(key.expiresAt)}</td>
              <td>{state}</td>
              <td>
                {props.manager && state === "active" ? (
                  <form
                    method="post"
                    action={`/pool/${props.pool.subdomain}/keys/${key.id}/revoke`}
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
  );
}

function MintForm(props: { pool: PoolRecord; errors?: FieldErrorMap | undefined }) {
  return (
    <form class="stack" method="post" action={`/pool/${props.pool.subdomain}/keys`}>
      <FormErrors errors={props.errors} />
      <Field
        label="Label"
        name="label"
        errors={props.errors}
        hint="Up to 60 characters, to tell keys apart."
      />
      <label>
        <span>Access</span>
        <select name="access">
          <option value="write">write (every method)</option>
          <option value="read">read (GET, HEAD, OPTIONS and the pool's read methods)</option>
        </select>
        <FieldErrors errors={props.errors} name="access" />
      </label>
      <label>
        <span>Expires</span>
        <select name="expires_preset">
          {KEY_EXPIRY_PRESETS.map((preset) => (
            <option value={preset}>{preset === "none" ? "never" : `in ${preset}`}</option>
          ))}
        </select>
        <FieldErrors errors={props.errors} name="expires_preset" />
      </label>
      <div class="actions">
        <button type="submit">Mint key</button>
      </div>
    </form>
  );
}

function AccessLogTable(props: {
  pool: PoolRecord;
  rows: AccessRow[];
  outcome: AccessOutcome | null;
}) {
  return (
    <>
      <form method="get" action={`/pool/${props.pool.subdomain}`} class="actions">
        <label>
          Outcome{" "}
          <select name="outcome">
            <option value="" selected={props.outcome === null}>
              all
            </option>
            {ACCESS_OUTCOMES.map((outcome) => (
              <option value={outcome} selected={props.outcome === outcome}>
                {outcome}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <table id="access-log">
        <thead>
          <tr>
            <th>When</th>
            <th>Outcome</th>
            <th class="num">Wait (ms)</th>
            <th>Key</th>
            <th>Source</th>
            <th class="num">Upstream</th>
            <th>Address</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td colspan={7} class="muted">
                Nothing logged{props.outcome ? ` with outcome ${props.outcome}` : ""}.
              </td>
            </tr>
          ) : null}
          {props.rows.map((row) => (
            <tr>
              <td>{new Date(row.at).toISOString().slice(0, 19).replace("T", " ")}</td>
              <td>
                {row.outcome}
                {row.reason ? <span class="muted"> ({row.reason})</span> : null}
              </td>
              <td class="num">{row.queuedMs}</td>
              <td>{row.keyLabel ?? <span class="muted">none</span>}</td>
              <td>{row.source}</td>
              <td class="num">{row.upstreamStatus ?? <span class="muted">—</span>}</td>
              <td>{row.remoteAddress ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The pool page. */
export function PoolDetailPage(props: {
  signedIn: SignedIn;
  pool: PoolRecord;
  figures: PoolFigures;
  keys: PoolKeyRecord[];
  access: AccessRow[];
  outcome: AccessOutcome | null;
  range: ChartRange;
  urls: { lockUrl: string; baseUrl: string; poolDomain: string };
  now: number;
  minted?: MintedPoolKey;
  errors?: FieldErrorMap;
}) {
  const { pool, minted } = props;
  const manager = props.signedIn.role !== "member";
  return (
    <Layout title={`Pool ${pool.name}`} signedIn={props.signedIn} chart={true}>
      <h1>
        Pool {pool.name} <span class="muted">{pool.subdomain}</span>
      </h1>
      <p class="muted">
        {pool.description ? `${pool.description} · ` : ""}
        {pool.origin} · {pool.backend} · {pool.requireKey ? "key required" : "open (no key needed)"}
        {pool.credential ? ` · credential in ${pool.credential.header}` : ""}
      </p>
      {manager ? (
        <div class="actions">
          <a href={`/pool/${pool.subdomain}/edit`}>Edit pool</a>
          <form method="post" action={`/pool/${pool.subdomain}/reset-learned`} class="inline">
            <button type="submit">Reset learned limits</button>
          </form>
        </div>
      ) : null}
      {minted ? (
        <section class="card" id="minted">
          <h2>New key: copy it now</h2>
          <p class="notice">
            This is the only time the key
            {minted.signingSecret || minted.requestSecret ? " and its secrets are" : " is"} shown.
            Only a hash of the key is kept.
          </p>
          <Secret id="minted-key" label="Key" value={minted.plaintext} />
          {minted.signingSecret ? (
            <Secret
              id="minted-signing-secret"
              label="Signing secret"
              value={minted.signingSecret}
            />
          ) : null}
          {minted.requestSecret ? (
            <Secret
              id="minted-request-secret"
              label={`Request-signing secret (key id ${minted.key.id})`}
              value={minted.requestSecret}
            />
          ) : null}
        </section>
      ) : null}
      <h2>Live</h2>
      <LivePoolStatus pool={pool} figures={props.figures} />
      <h2>Traffic per minute</h2>
      <div class="actions">
        {(Object.keys(CHART_RANGES) as ChartRange[]).map((range) =>
          range === props.range ? (
            <b>last {range}</b>
          ) : (
            <a href={`/pool/${pool.subdomain}?range=${range}`}>last {range}</a>
          ),
        )}
      </div>
      <div
        class="chart"
        id="chart"
        data-series-url={`/pool/${pool.subdomain}/series?range=${props.range}`}
      >
        <p class="muted">
          The chart needs JavaScript; the numbers are at /pool/{pool.subdomain}/series.
        </p>
      </div>
      <h2 id="keys">Keys</h2>
      <KeyRows pool={pool} keys={props.keys} manager={manager} now={props.now} />
      {manager ? (
        <details open={props.errors !== undefined}>
          <summary>Mint a key</summary>
          <MintForm pool={pool} errors={props.errors} />
        </details>
      ) : null}
      <CallerPolicySummary policies={pool.callerPolicies} />
      <h2>Use it</h2>
      <p class="muted">With a key of this pool in $SLUICE_KEY:</p>
      <CurlLines pool={pool} urls={props.urls} />
      <h2>Recent access log</h2>
      <AccessLogTable pool={pool} rows={props.access} outcome={props.outcome} />
    </Layout>
  );
}
