import type { ContentfulStatusCode, UnofficialStatusCode } from "hono/utils/http-status";
import { SluiceError, type SluiceErrorCode } from "../../src/errors.js";

/**
 * "Client closed request" (nginx's convention): the caller gave up (AbortSignal, dropped
 * socket) while waiting. Nobody usually reads this response; it keeps access logs honest.
 */
export const CLIENT_CLOSED_REQUEST = 499 as UnofficialStatusCode;

/**
 * The one mapping from stable error codes to HTTP statuses, shared by the Control API and
 * the Lock API. Typed as a full record so a new code in `src/errors.ts` fails to compile
 * until it is given a status here.
 */
const STATUS_BY_CODE: Readonly<Record<SluiceErrorCode, ContentfulStatusCode>> = {
  invalid_argument: 422,
  pool_not_found: 404,
  budget_not_found: 404,
  not_found: 404,
  too_many_requests: 429,
  queue_timeout: 504,
  aborted: CLIENT_CLOSED_REQUEST,
  capped: 409,
  store_unavailable: 503,
  unauthorized: 401,
  forbidden: 403,
  conflict: 409,
  payload_too_large: 413,
  request_timeout: 408,
  unsupported_media_type: 415,
  closed: 503,
  result_too_large: 413,
  bad_gateway: 502,
  database_busy: 503,
  upstream_timeout: 504,
  missing_dependency: 500,
};

/**
 * The HTTP status for a thrown value: the status of its {@link SluiceError} code, or 500 for
 * anything else (a bug, never the caller's fault).
 *
 * @example
 * ```ts
 * statusForError(new PoolNotFoundError("llm")); // 404
 * statusForError(new InvalidArgumentError("bad")); // 422
 * statusForError(new TypeError("oops")); // 500
 * ```
 */
export function statusForError(error: unknown): ContentfulStatusCode {
  if (error instanceof SluiceError) return STATUS_BY_CODE[error.code] ?? 500;
  return 500;
}

/**
 * Lock API and pool proxy wire codes (contract section 7, Lock API): the `error` field of
 * their `{ error, message }` bodies. Where the contract names a code it is used as is
 * (a 403 is `unauthorized`, a missing pool or slot `not_found`).
 */
const LOCK_API_ERROR_BY_CODE: Readonly<Record<SluiceErrorCode, string>> = {
  invalid_argument: "invalid_request",
  pool_not_found: "not_found",
  budget_not_found: "not_found",
  not_found: "not_found",
  too_many_requests: "too_many_requests",
  queue_timeout: "queue_timeout",
  aborted: "aborted",
  capped: "capped",
  store_unavailable: "store_unavailable",
  unauthorized: "unauthorized",
  forbidden: "unauthorized",
  conflict: "conflict",
  payload_too_large: "payload_too_large",
  request_timeout: "request_timeout",
  unsupported_media_type: "unsupported_media_type",
  closed: "shutting_down",
  result_too_large: "result_too_large",
  bad_gateway: "bad_gateway",
  database_busy: "database_busy",
  upstream_timeout: "upstream_timeout",
  missing_dependency: "internal_error",
};

/**
 * The Lock API's status and wire code for a thrown value. Statuses are those of
 * {@link statusForError}, except that a bad request value (`invalid_argument`) is a 400
 * `invalid_request` on the Lock API and the proxy (the Control API answers 422). Anything
 * that is not a {@link SluiceError} is a 500 `internal_error`.
 *
 * @example
 * ```ts
 * lockApiError(new SlotCappedError(deadline)); // { status: 409, error: "capped" }
 * lockApiError(new InvalidArgumentError("waitMs …")); // { status: 400, error: "invalid_request" }
 * ```
 */
export function lockApiError(error: unknown): { status: ContentfulStatusCode; error: string } {
  if (!(error instanceof SluiceError)) return { status: 500, error: "internal_error" };
  const status = error.code === "invalid_argument" ? 400 : statusForError(error);
  return { status, error: LOCK_API_ERROR_BY_CODE[error.code] ?? "internal_error" };
}
