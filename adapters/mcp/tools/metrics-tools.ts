import * as v from "valibot";
import { parseIsoDateTime } from "../../../src/catalog/validation.js";
import { summarizePoolMetrics } from "../../../src/metrics/summary.js";
import { PoolMetricsSummarySchema } from "../../hono/control/resource-schemas.js";
import { defineTool, READ_ONLY, ToolRefusal } from "../tool-kit.js";
import { PoolArgument, wholeNumberArgument } from "./schemas.js";
import { teamPool } from "./team-pool.js";

const DateTimeArgument = v.pipe(
  v.string("must be an ISO-8601 date-time"),
  v.check(
    (text) => parseIsoDateTime(text) !== null,
    "must be an ISO-8601 date-time with a time zone",
  ),
);

/** `get_pool_metrics`: the Control API's PoolMetricsSummary for a range. */
export const getPoolMetricsTool = defineTool({
  name: "get_pool_metrics",
  title: "Get pool metrics",
  description:
    "Requests, admitted, admit rate and queued share of a pool over a range (default: the retention window).",
  scope: "metrics:read",
  annotations: READ_ONLY,
  input: v.object({
    pool: PoolArgument,
    from: v.optional(v.pipe(DateTimeArgument, v.description("Start of the range."))),
    to: v.optional(v.pipe(DateTimeArgument, v.description("End of the range (default now)."))),
  }),
  output: PoolMetricsSummarySchema,
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const from = args.from === undefined ? null : new Date(parseIsoDateTime(args.from) as number);
    const to = args.to === undefined ? null : new Date(parseIsoDateTime(args.to) as number);
    if (from && to && from > to) throw new ToolRefusal("from must not be later than to.");
    return summarizePoolMetrics({
      recorder: deps.metrics,
      pool: pool.subdomain,
      poolId: pool.id,
      now: deps.clock.now(),
      retentionDays: pool.metricsRetentionDays,
      from,
      to,
    });
  },
});

const OUTCOMES = [
  "admitted",
  "queued",
  "rejected",
  "timed_out",
  "aborted",
  "unavailable",
  "refused",
] as const;
const TROUBLE: (typeof OUTCOMES)[number][] = ["rejected", "timed_out", "unavailable", "refused"];

/** `query_access_log`: recent refusals and queue timeouts of a pool, and upstream 429s. */
export const queryAccessLogTool = defineTool({
  name: "query_access_log",
  title: "Query a pool's access log",
  description:
    "Recent acquire attempts of a pool, newest first (by default refusals, queue timeouts and 503s), with the count of upstream 429s over the same period.",
  scope: "metrics:read",
  annotations: { ...READ_ONLY, idempotentHint: false },
  input: v.object({
    pool: PoolArgument,
    outcomes: v.optional(
      v.pipe(
        v.array(v.picklist(OUTCOMES, `outcomes may list ${OUTCOMES.join(", ")}`)),
        v.description("Outcomes to list; default rejected, timed_out, unavailable."),
      ),
    ),
    minutes: v.optional(
      wholeNumberArgument(
        "minutes",
        1,
        10_080,
        "How far back to look (at most 7 days); default 60.",
      ),
    ),
    limit: v.optional(wholeNumberArgument("limit", 1, 500, "Most entries to return; default 50.")),
  }),
  output: v.object({
    pool: v.string(),
    from: v.string(),
    to: v.string(),
    entries: v.array(
      v.object({
        at: v.string(),
        outcome: v.picklist(OUTCOMES),
        reason: v.nullable(v.string()),
        queued_ms: v.number(),
        key_id: v.nullable(v.number()),
        source: v.picklist(["lock", "proxy"]),
      }),
    ),
    upstream_throttled: v.pipe(
      v.number(),
      v.description("Upstream 429/503 answers counted over the period."),
    ),
  }),
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const now = deps.clock.now();
    // Entries older than the pool were written by an earlier pool of the same subdomain.
    const from = Math.max(now - (args.minutes ?? 60) * 60_000, pool.createdAt);
    const outcomes = args.outcomes ?? TROUBLE;
    const limit = args.limit ?? 50;
    const scanned = await deps.accessLog.list(pool.subdomain, { from, to: now + 1, limit: 10_000 });
    const entries = scanned
      .filter((entry) => outcomes.includes(entry.outcome))
      .slice(0, limit)
      .map((entry) => ({
        at: new Date(entry.at).toISOString(),
        outcome: entry.outcome,
        reason: entry.reason,
        queued_ms: entry.queuedMs,
        key_id: entry.keyId,
        source: entry.source,
      }));
    return {
      pool: pool.subdomain,
      from: new Date(from).toISOString(),
      to: new Date(now).toISOString(),
      entries,
      upstream_throttled: deps.metrics.totals(pool.subdomain, from, now + 1).throttled,
    };
  },
});
