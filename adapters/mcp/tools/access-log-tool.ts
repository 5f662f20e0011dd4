import * as v from "valibot";
import {
  ACCESS_OUTCOMES,
  type AccessLogEntry,
  type AccessOutcome,
} from "../../../src/access-log/types.js";
import { defineTool, READ_ONLY } from "../tool-kit.js";
import { PoolArgument, wholeNumberArgument } from "./schemas.js";
import { teamPool } from "./team-pool.js";

const OUTCOMES = ACCESS_OUTCOMES;
const TROUBLE: readonly AccessOutcome[] = ["rejected", "timed_out", "unavailable", "refused"];
const THROTTLED_STATUS = 429;

/** Which entries a call asked for. */
interface EntryFilter {
  outcomes?: AccessOutcome[] | undefined;
  upstreamStatus?: number | undefined;
}

/**
 * Both filters when given; with neither, the attempts worth a look: Sluice's refusals, queue
 * timeouts and 503s, and the calls the upstream throttled (429).
 */
function entryMatcher(filter: EntryFilter): (entry: AccessLogEntry) => boolean {
  const { outcomes, upstreamStatus } = filter;
  if (outcomes === undefined && upstreamStatus === undefined) {
    return (entry) => TROUBLE.includes(entry.outcome) || entry.upstreamStatus === THROTTLED_STATUS;
  }
  return (entry) =>
    (outcomes === undefined || outcomes.includes(entry.outcome)) &&
    (upstreamStatus === undefined || entry.upstreamStatus === upstreamStatus);
}

/** `query_access_log`: recent refusals and queue timeouts of a pool, and upstream 429s. */
export const queryAccessLogTool = defineTool({
  name: "query_access_log",
  title: "Query a pool's access log",
  description:
    "Recent acquire attempts of a pool, newest first: by default Sluice's refusals, queue timeouts and 503s, and proxied calls the upstream answered 429; each with the upstream's status when the call went through the pool proxy. Also upstream_throttled: the upstream's throttles over the same period (429 answers, and the 429s Lock API callers report at release; for a database pool, its database being too busy). An upstream 503 is not counted.",
  scope: "metrics:read",
  annotations: { ...READ_ONLY, idempotentHint: false },
  input: v.object({
    pool: PoolArgument,
    outcomes: v.optional(
      v.pipe(
        v.array(v.picklist(OUTCOMES, `outcomes may list ${OUTCOMES.join(", ")}`)),
        // An empty list would match nothing: almost surely a mistake, not a question.
        v.minLength(1, "outcomes must list at least one outcome (leave it out for the default)"),
        v.description(
          "Outcomes to list. Default (with no upstream_status either): rejected, timed_out, unavailable, refused, and any upstream 429.",
        ),
      ),
    ),
    upstream_status: v.optional(
      wholeNumberArgument(
        "upstream_status",
        100,
        599,
        "Only proxied calls the upstream answered with this status (429: throttled by the upstream).",
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
        upstream_status: v.pipe(
          v.nullable(v.number()),
          v.description(
            "The upstream's answer to a proxied call; null when it gave none or the caller used the Lock API.",
          ),
        ),
      }),
    ),
    upstream_throttled: v.pipe(
      v.number(),
      v.description(
        "The upstream's throttles over the period: its 429 answers (proxied, or reported at Lock API release; a database pool: its database too busy). Upstream 503s are not counted.",
      ),
    ),
  }),
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const now = deps.clock.now();
    // Entries older than the pool were written by an earlier pool of the same subdomain.
    const from = Math.max(now - (args.minutes ?? 60) * 60_000, pool.createdAt);
    const matches = entryMatcher({
      outcomes: args.outcomes,
      upstreamStatus: args.upstream_status,
    });
    const scanned = await deps.accessLog.list(pool.subdomain, { from, to: now + 1, limit: 10_000 });
    const entries = scanned
      .filter(matches)
      .slice(0, args.limit ?? 50)
      .map((entry) => ({
        at: new Date(entry.at).toISOString(),
        outcome: entry.outcome,
        reason: entry.reason,
        queued_ms: entry.queuedMs,
        key_id: entry.keyId,
        source: entry.source,
        upstream_status: entry.upstreamStatus,
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
