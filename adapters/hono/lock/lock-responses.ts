import { QueueTimeoutError, RejectedError } from "../../../src/errors.js";
import type { SlotGrant } from "../../../src/governor/types.js";
import { refusingPolicy } from "../../../src/policies/policy-refusal.js";
import { lockApiError } from "../error-status.js";

/** Governor response headers (contract 4.2) on lock grants and proxied responses. */
export const GOVERNOR_HEADERS = {
  remainingSlots: "x-svc-remaining-slots",
  effectiveLimit: "x-svc-effective-limit",
  queuedMs: "x-svc-queued-ms",
} as const;

/** Marks a response Sluice produced itself (never the upstream's), e.g. its own 429. */
export const REJECTED_BY_HEADER = "x-svc-rejected-by";
/** Names the caller policy that refused a request (`docs/caller-policies.md`). */
export const REFUSED_BY_POLICY_HEADER = "x-svc-refused-by-policy";
/** The exact retry hint behind `Retry-After` (which has whole seconds only). */
export const RETRY_AFTER_MS_HEADER = "x-svc-retry-after-ms";

type HeaderRecord = Record<string, string>;

/**
 * The governor headers of a grant, as a header record.
 *
 * @example
 * ```ts
 * grantHeaders(grant); // { "x-svc-remaining-slots": "3", "x-svc-effective-limit": "8", "x-svc-queued-ms": "0" }
 * ```
 */
export function grantHeaders(grant: SlotGrant): HeaderRecord {
  return {
    [GOVERNOR_HEADERS.remainingSlots]: String(grant.remainingSlots),
    [GOVERNOR_HEADERS.effectiveLimit]: String(grant.effectiveLimit),
    [GOVERNOR_HEADERS.queuedMs]: String(grant.queuedMs),
  };
}

/**
 * `Retry-After` in whole seconds, rounded up and at least 1 (a 0 invites a hot retry loop).
 *
 * @example
 * ```ts
 * retryAfterSeconds(1200); // "2"
 * ```
 */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}

/**
 * A `{ error, message }` answer Sluice gives itself on the proxy (never the origin's), marked
 * with `x-svc-rejected-by: sluice` like every refusal of {@link lockErrorResponse}: a 502 or
 * 504 of Sluice's own stays distinguishable from one the origin sent.
 *
 * @example
 * ```ts
 * sluiceReply({ error: "bad_gateway", message: "The origin could not be reached." }, 502);
 * ```
 */
export function sluiceReply(
  body: { error: string; message: string },
  status: number,
  headers: HeaderRecord = {},
): Response {
  headers[REJECTED_BY_HEADER] = "sluice";
  return jsonReply(body, status, headers);
}

/**
 * A JSON response with a string body (the fast path of `@hono/node-server`).
 *
 * @example
 * ```ts
 * jsonReply({ released: true }, 200);
 * ```
 */
export function jsonReply(body: unknown, status: number, headers: HeaderRecord = {}): Response {
  headers["content-type"] = "application/json";
  headers["cache-control"] = "no-store";
  return new Response(JSON.stringify(body), { status, headers });
}

/**
 * The `{ error, message }` response for anything thrown on the Lock API or the proxy, with
 * the status and wire code of `lockApiError`. Every such response carries
 * `x-svc-rejected-by: sluice`; a 429 also carries `Retry-After` and `x-svc-retry-after-ms`,
 * a 503 (Redis away, server stopping) `Retry-After: 1`. A 429 or a queue timeout (504) of the
 * governor carries the governor headers `x-svc-effective-limit` and
 * `x-svc-remaining-slots: 0` (nothing was free to this caller): a client that sizes its
 * concurrency from them reads them on every answer of an authenticated call. The 401, 403
 * and 404 carry none, so an unauthenticated caller learns nothing of the pool.
 * Unexpected errors are a bare 500 whose message reveals nothing.
 *
 * @example
 * ```ts
 * lockErrorResponse(new RejectedError("concurrency", 1000)); // 429, Retry-After: 1
 * ```
 */
export function lockErrorResponse(error: unknown): Response {
  const { status, error: code } = lockApiError(error);
  const headers: HeaderRecord = { [REJECTED_BY_HEADER]: "sluice" };
  if (error instanceof RejectedError) {
    headers["retry-after"] = retryAfterSeconds(error.retryAfterMs);
    headers[RETRY_AFTER_MS_HEADER] = String(error.retryAfterMs);
    addRefusalFigures(headers, error.effectiveLimit);
  } else if (error instanceof QueueTimeoutError) {
    addRefusalFigures(headers, error.effectiveLimit);
  } else if (refusingPolicy(error) !== null) {
    // Names the policy (never a secret): the caller can tell what to fix, and the server's
    // metrics count the refusal under the policy rather than as a bare 401/403.
    headers[REFUSED_BY_POLICY_HEADER] = refusingPolicy(error) as string;
  } else if (status === 503) {
    // Redis away or the server stopping: worth a retry soon, elsewhere or here.
    headers["retry-after"] = "1";
  }
  const message = status === 500 ? "Internal server error." : (error as Error).message;
  return jsonReply({ error: code, message }, status, headers);
}

function addRefusalFigures(headers: HeaderRecord, effectiveLimit: number | undefined): void {
  if (effectiveLimit === undefined) return;
  headers[GOVERNOR_HEADERS.remainingSlots] = "0";
  headers[GOVERNOR_HEADERS.effectiveLimit] = String(effectiveLimit);
}

/**
 * An app's error handler: {@link lockErrorResponse}, and `logError` for faults only. A queue
 * timeout (504) or Redis away (503, its health change is logged once) are answers, and
 * logging each one with its stack would flood the log.
 *
 * @example
 * ```ts
 * app.onError(respondToError((error) => console.error("Lock API error:", error)));
 * ```
 */
export function respondToError(
  logError: (error: unknown, request?: Request) => void,
): (error: unknown, request?: Request) => Response {
  return (error, request) => {
    const response = lockErrorResponse(error);
    if (response.status === 500) logError(error, request);
    return response;
  };
}
