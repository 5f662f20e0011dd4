/**
 * The pool access log: every acquire attempt (Lock API and proxy) with its outcome, key,
 * queue time and caller address; renewals and releases are not logged.
 */
export type { BufferedAccessLogOptions } from "./buffered-access-log.js";
export { BufferedAccessLog } from "./buffered-access-log.js";
export { MemoryAccessLogStore } from "./memory-access-log-store.js";
export {
  DEFAULT_ACCESS_LOG_LIMIT,
  MAX_ACCESS_LOG_LIMIT,
  oldestKept,
  resolveAccessLogQuery,
  retentionCutoff,
  sinceCreation,
} from "./query.js";
export type { AccessLogRetentionJob, AccessLogRetentionOptions } from "./retention.js";
export { retentionOfPools, startAccessLogRetention } from "./retention.js";
export type {
  AccessLog,
  AccessLogEntry,
  AccessLogQuery,
  AccessLogRetention,
  AccessLogStore,
  AccessOutcome,
  AccessSource,
  ResolvedAccessLogQuery,
} from "./types.js";
export { ACCESS_OUTCOMES } from "./types.js";
