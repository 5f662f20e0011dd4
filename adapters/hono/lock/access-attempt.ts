import type { AccessLog, AccessLogEntry, AccessSource } from "../../../src/access-log/types.js";
import {
  AbortedError,
  GovernorClosedError,
  QueueTimeoutError,
  RejectedError,
  StoreUnavailableError,
} from "../../../src/errors.js";
import type { SlotGrant } from "../../../src/governor/types.js";
import type { CallerPolicyName } from "../../../src/policies/policy-refusal.js";

/** Who attempted an acquire, and where. */
export interface AttemptCaller {
  pool: string;
  keyId: number | null;
  remoteAddress: string | null;
  source: AccessSource;
}

/**
 * Appends the access log entry of a granted acquire: `admitted`, or `queued` when it waited;
 * `upstreamStatus` when the proxied call it was for has ended (null for the Lock API).
 *
 * @example
 * ```ts
 * logGranted(accessLog, caller, grantedAt, grant, 429);
 * ```
 */
export function logGranted(
  accessLog: AccessLog | undefined,
  caller: AttemptCaller,
  at: number,
  grant: SlotGrant,
  upstreamStatus: number | null = null,
): void {
  if (!accessLog) return;
  const outcome = grant.queuedMs > 0 ? "queued" : "admitted";
  accessLog.append({ ...entry(caller, at, outcome, grant.queuedMs, null), upstreamStatus });
}

/**
 * Appends the access log entry of a failed acquire: `rejected` (with the reason), `timed_out`,
 * `aborted`, or `unavailable` (a 503: the server stopping, or its Redis slot store away).
 * Failures that are no attempt on the pool's capacity (unknown pool, bad input) are not
 * logged.
 *
 * @example
 * ```ts
 * logFailed(accessLog, caller, clock.now(), startedAt, error);
 * ```
 */
export function logFailed(
  accessLog: AccessLog | undefined,
  caller: AttemptCaller,
  at: number,
  startedAt: number,
  error: unknown,
): void {
  if (!accessLog) return;
  if (error instanceof RejectedError) {
    accessLog.append(entry(caller, at, "rejected", 0, error.reason));
  } else if (error instanceof QueueTimeoutError) {
    accessLog.append(entry(caller, at, "timed_out", Math.max(0, at - startedAt), null));
  } else if (error instanceof AbortedError) {
    accessLog.append(entry(caller, at, "aborted", Math.max(0, at - startedAt), null));
  } else if (error instanceof GovernorClosedError || error instanceof StoreUnavailableError) {
    accessLog.append(entry(caller, at, "unavailable", Math.max(0, at - startedAt), null));
  }
}

/**
 * Appends the access log entry of an attempt a caller policy turned away (`refused`, the
 * policy's name as the reason).
 *
 * @example
 * ```ts
 * logRefused(accessLog, caller, clock.now(), "ip_allowlist");
 * ```
 */
export function logRefused(
  accessLog: AccessLog | undefined,
  caller: AttemptCaller,
  at: number,
  policy: CallerPolicyName,
): void {
  accessLog?.append(entry(caller, at, "refused", 0, policy));
}

function entry(
  caller: AttemptCaller,
  at: number,
  outcome: AccessLogEntry["outcome"],
  queuedMs: number,
  reason: AccessLogEntry["reason"],
): AccessLogEntry {
  return {
    at,
    pool: caller.pool,
    keyId: caller.keyId,
    outcome,
    reason,
    queuedMs,
    remoteAddress: caller.remoteAddress,
    source: caller.source,
    upstreamStatus: null,
  };
}
