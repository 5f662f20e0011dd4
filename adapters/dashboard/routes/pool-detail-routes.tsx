import { Hono } from "hono";
import { ACCESS_OUTCOMES, type AccessOutcome } from "../../../src/access-log/types.js";
import type { MintedPoolKey } from "../../../src/catalog/pool-keys.js";
import type { PoolRecord } from "../../../src/catalog/types.js";
import type { DashboardContext, DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import { type FieldErrorMap, fieldErrorsOf, formText, readForm } from "../forms.js";
import { poolFigures } from "../live-figures.js";
import { type AccessRow, LivePoolStatus, PoolDetailPage } from "../pages/pool-detail-page.js";
import { chartRangeOf, poolSeries } from "../pool-series.js";

const ACCESS_ROWS = 100;

/** The pool page: live status, chart, access log, keys, learned limits, curl lines. */
export function poolDetailRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  const store = deps.catalog.store;
  const publicUrls = deps.publicUrls ?? (() => ({ baseUrl: deps.baseUrl, lockUrl: deps.lockUrl }));

  async function findPool(c: DashboardContext): Promise<PoolRecord | undefined> {
    return await store.getPoolBySubdomain(c.var.signedIn.team.id, c.req.param("pool") ?? "");
  }

  async function accessRows(pool: PoolRecord, outcome: AccessOutcome | null): Promise<AccessRow[]> {
    const labels = new Map(
      (await store.listPoolKeys(pool.id)).map((key) => [key.id, key.label || `…${key.lastFour}`]),
    );
    const entries = await deps.accessLog.list(pool.subdomain, {
      from: pool.createdAt,
      limit: outcome ? 10_000 : ACCESS_ROWS,
    });
    return entries
      .filter((entry) => outcome === null || entry.outcome === outcome)
      .slice(0, ACCESS_ROWS)
      .map((entry) => ({
        ...entry,
        keyLabel: entry.keyId === null ? null : (labels.get(entry.keyId) ?? `#${entry.keyId}`),
      }));
  }

  async function page(
    c: DashboardContext,
    pool: PoolRecord,
    extra: { minted?: MintedPoolKey; errors?: FieldErrorMap } = {},
    status: 200 | 201 | 422 = 200,
  ) {
    const outcomeText = c.req.query("outcome") ?? "";
    const outcome = (ACCESS_OUTCOMES as readonly string[]).includes(outcomeText)
      ? (outcomeText as AccessOutcome)
      : null;
    const [figures, keys, access] = await Promise.all([
      poolFigures(deps, pool),
      store.listPoolKeys(pool.id),
      accessRows(pool, outcome),
    ]);
    return c.html(
      <PoolDetailPage
        signedIn={c.var.signedIn}
        pool={pool}
        figures={figures}
        keys={keys}
        access={access}
        outcome={outcome}
        range={chartRangeOf(c.req.query("range"))}
        urls={{ ...publicUrls(), poolDomain: deps.poolDomain }}
        now={deps.clock.now()}
        {...extra}
      />,
      status,
    );
  }

  routes.get("/pool/:pool", async (c) => {
    const pool = await findPool(c);
    return pool ? page(c, pool) : c.notFound();
  });

  routes.get("/pool/:pool/live", async (c) => {
    const pool = await findPool(c);
    if (!pool) return c.notFound();
    return c.html(<LivePoolStatus pool={pool} figures={await poolFigures(deps, pool)} />);
  });

  routes.get("/pool/:pool/series", async (c) => {
    const pool = await findPool(c);
    if (!pool) return c.json({ message: "Not found." }, 404);
    const range = chartRangeOf(c.req.query("range"));
    return c.json(
      poolSeries(deps.metrics, pool.subdomain, range, pool.metricsRetentionDays, deps.clock.now()),
    );
  });

  routes.post("/pool/:pool/keys", async (c) => {
    const pool = await findPool(c);
    if (!pool) return c.notFound();
    const form = await readForm(c);
    let minted: MintedPoolKey | undefined;
    const errors = await fieldErrorsOf(async () => {
      minted = await deps.catalog.mintPoolKey({
        teamId: c.var.signedIn.team.id,
        subdomain: pool.subdomain,
        label: formText(form, "label"),
        access: formText(form, "access") || undefined,
        expiresPreset: formText(form, "expires_preset") || undefined,
      });
    });
    if (errors) return page(c, pool, { errors }, 422);
    c.header("Cache-Control", "no-store");
    return page(c, pool, { minted: minted! }, 201);
  });

  routes.post("/pool/:pool/keys/:key/revoke", async (c) => {
    const pool = await findPool(c);
    const keyId = Number(c.req.param("key"));
    if (!pool || !Number.isSafeInteger(keyId)) return c.notFound();
    const revoked = await deps.catalog.revokePoolKey(c.var.signedIn.team.id, pool.subdomain, keyId);
    if (!revoked) return c.notFound();
    return c.redirect(`/pool/${pool.subdomain}#keys`, 303);
  });

  routes.post("/pool/:pool/reset-learned", async (c) => {
    const pool = await findPool(c);
    if (!pool) return c.notFound();
    if (deps.governor.poolSettings(pool.subdomain))
      await deps.governor.resetLearned(pool.subdomain);
    return c.redirect(`/pool/${pool.subdomain}`, 303);
  });
  return routes;
}
