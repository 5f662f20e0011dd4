import * as v from "valibot";
import { parseIsoDateTime } from "../../../src/catalog/validation.js";
import { summarizePoolMetrics } from "../../../src/metrics/summary.js";
import { PoolMetricsSummarySchema } from "../../hono/control/resource-schemas.js";
import { defineTool, READ_ONLY, ToolRefusal } from "../tool-kit.js";
import { PoolArgument } from "./schemas.js";
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
