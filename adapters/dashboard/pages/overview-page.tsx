import type { SignedIn } from "../../../src/auth/auth-service.js";
import { budgetUnallocated } from "../../../src/catalog/governor-mapping.js";
import type { BudgetRecord, PoolRecord } from "../../../src/catalog/types.js";
import type { PoolFigures } from "../live-figures.js";
import { formatTime, Layout } from "./layout.js";

/** What the overview shows: the team's budgets and pools with live figures. */
export interface OverviewData {
  budgets: BudgetRecord[];
  pools: PoolRecord[];
  figures: Map<number, PoolFigures>;
}

function PoolRows(props: { pools: PoolRecord[]; figures: Map<number, PoolFigures> }) {
  if (props.pools.length === 0) {
    return (
      <tr>
        <td colspan={7} class="muted">
          No pools.
        </td>
      </tr>
    );
  }
  return (
    <>
      {props.pools.map((pool) => {
        const f = props.figures.get(pool.id);
        return (
          <tr>
            <td>
              {/* An id: htmx gives focus back to the element of the same id after each
                  refresh, so a keyboard user's place survives the 2 s swap. */}
              <a id={`pool-link-${pool.subdomain}`} href={`/pool/${pool.subdomain}`}>
                {pool.name}
              </a>{" "}
              <span class="muted">{pool.subdomain}</span>
            </td>
            <td class="num" data-held={pool.subdomain}>
              {f ? `${f.held} / ${f.effectiveLimit} / ${f.maxConcurrent}` : "—"}
            </td>
            <td class="num" data-queued={pool.subdomain}>
              {f?.queued ?? "—"}
            </td>
            <td class="num">
              {f ? `${f.rpmUsed}${f.rpmLimit === null ? "" : ` / ${f.rpmLimit}`}` : "—"}
            </td>
            <td>{f && f.pausedUntil > 0 ? formatTime(f.pausedUntil) : "—"}</td>
            <td class="num">{f?.learnedLimit ?? "—"}</td>
            <td class="num">{pool.budgetId === null ? "—" : pool.reservedConcurrent}</td>
          </tr>
        );
      })}
    </>
  );
}

function PoolTable(props: { pools: PoolRecord[]; figures: Map<number, PoolFigures> }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Pool</th>
          <th class="num" title="held / effective limit / max">
            Held / effective / max
          </th>
          <th class="num">Queued</th>
          <th class="num" title="admitted this minute / RPM gate">
            RPM used
          </th>
          <th>Paused until</th>
          <th class="num">Learned limit</th>
          <th class="num">Reserved</th>
        </tr>
      </thead>
      <tbody>
        <PoolRows pools={props.pools} figures={props.figures} />
      </tbody>
    </table>
  );
}

/**
 * The live part of the overview; htmx replaces it every 2 s with a fresh copy from
 * `/live/overview` (no script of ours, no page reload).
 */
export function LiveOverview(props: { data: OverviewData; manager: boolean }) {
  const { budgets, pools, figures } = props.data;
  const loose = pools.filter((pool) => pool.budgetId === null);
  return (
    <section id="live-overview" hx-get="/live/overview" hx-trigger="every 2s" hx-swap="outerHTML">
      {budgets.map((budget) => (
        <div class="card">
          <h2>
            Budget {budget.name}{" "}
            {props.manager ? (
              <a class="muted" id={`budget-edit-${budget.id}`} href={`/budget/${budget.id}/edit`}>
                edit
              </a>
            ) : null}
          </h2>
          <p class="muted">
            {budget.originMaxConcurrent === null
              ? "No shared ceiling."
              : `Origin max ${budget.originMaxConcurrent} concurrent, ${budgetUnallocated(budget, pools)} unallocated.`}
          </p>
          <PoolTable
            pools={pools.filter((pool) => pool.budgetId === budget.id)}
            figures={figures}
          />
        </div>
      ))}
      <div class="card">
        <h2>Pools in no budget</h2>
        <PoolTable pools={loose} figures={figures} />
      </div>
    </section>
  );
}

/** The overview: budgets, pools and their live figures. */
export function OverviewPage(props: { signedIn: SignedIn; data: OverviewData }) {
  const manager = props.signedIn.role !== "member";
  return (
    <Layout title="Overview" signedIn={props.signedIn}>
      <h1>Overview</h1>
      {manager ? (
        <div class="actions">
          <a href="/budget/new">New budget</a>
          <a href="/pool/new">New pool</a>
        </div>
      ) : null}
      <LiveOverview data={props.data} manager={manager} />
    </Layout>
  );
}
