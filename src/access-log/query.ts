import { InvalidArgumentError } from "../errors.js";
import type { AccessLogQuery, AccessLogRetention, ResolvedAccessLogQuery } from "./types.js";

/** Entries an access-log query answers when it names no `limit`. */
export const DEFAULT_ACCESS_LOG_LIMIT = 100;
/** The largest `limit` an access-log query may ask for. */
export const MAX_ACCESS_LOG_LIMIT = 10_000;
const DAY_MS = 86_400_000;

/**
 * Fills in the bounds of a query (from the beginning, to the end of time, 100 entries) and
 * checks them.
 *
 * @example
 * ```ts
 * resolveAccessLogQuery({ limit: 5 }); // { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 5 }
 * ```
 */
export function resolveAccessLogQuery(query: AccessLogQuery = {}): ResolvedAccessLogQuery {
  const from = query.from ?? 0;
  const to = query.to ?? Number.MAX_SAFE_INTEGER;
  const limit = query.limit ?? DEFAULT_ACCESS_LOG_LIMIT;
  const issues: string[] = [];
  if (!Number.isSafeInteger(from)) issues.push("from: must be epoch milliseconds");
  if (!Number.isSafeInteger(to)) issues.push("to: must be epoch milliseconds");
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_ACCESS_LOG_LIMIT) {
    issues.push(`limit: must be a whole number from 1 to ${MAX_ACCESS_LOG_LIMIT}`);
  }
  if (issues.length > 0) {
    throw new InvalidArgumentError(`Invalid access log query: ${issues.join("; ")}`, issues);
  }
  return { from, to, limit };
}

/**
 * The query narrowed to what happened since `createdAt`: entries older than a pool were
 * written under its subdomain by an earlier pool (maybe another team's).
 *
 * @example
 * ```ts
 * sinceCreation({ from: 0, to: 9_000, limit: 5 }, 4_000); // { from: 4_000, to: 9_000, limit: 5 }
 * ```
 */
export function sinceCreation(
  query: ResolvedAccessLogQuery,
  createdAt: number,
): ResolvedAccessLogQuery {
  return { ...query, from: Math.max(query.from, createdAt) };
}

/**
 * The oldest instant a pool keeps, for a retention in days.
 *
 * @example
 * ```ts
 * retentionCutoff(30, Date.now()); // entries before this are pruned
 * ```
 */
export function retentionCutoff(retentionDays: number, now: number): number {
  return now - Math.max(0, retentionDays) * DAY_MS;
}

/**
 * The oldest instant a pool keeps: within its retention, and not before the pool was created.
 *
 * @example
 * ```ts
 * oldestKept({ pool: "llm", retentionDays: 30, createdAt: Date.now() - 3_600_000 }, Date.now()); // an hour ago
 * ```
 */
export function oldestKept(retention: AccessLogRetention, now: number): number {
  const cutoff = retentionCutoff(retention.retentionDays, now);
  return retention.createdAt === undefined ? cutoff : Math.max(cutoff, retention.createdAt);
}
