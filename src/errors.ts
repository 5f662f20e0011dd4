/**
 * Stable error codes. Adapters map these to transport statuses in one place
 * (see `adapters/hono/error-status.ts`); never match on messages.
 */
export type SluiceErrorCode =
  | "invalid_argument"
  | "pool_not_found"
  | "budget_not_found"
  | "too_many_requests"
  | "queue_timeout"
  | "aborted"
  | "not_found"
  | "capped"
  | "store_unavailable"
  | "unauthorized"
  | "forbidden"
  | "conflict"
  | "payload_too_large"
  | "request_timeout"
  | "unsupported_media_type"
  | "closed"
  | "result_too_large"
  | "bad_gateway"
  | "database_busy"
  | "upstream_timeout"
  | "missing_dependency";

/**
 * Marks Sluice errors across copies of the package: an app that loads both the ESM and the
 * CommonJS build (or two installed versions) has two `SluiceError` classes, and a plain
 * `instanceof` against one would miss errors thrown by the other.
 */
const SLUICE_ERROR_BRAND: unique symbol = Symbol.for("sluice.SluiceError") as never;

/**
 * Base class of every error Sluice throws on purpose. `code` is stable across versions.
 * `error instanceof SluiceError` holds for errors of any copy of the package (ESM and
 * CommonJS builds alike); for a subclass, compare `code` when copies may mix.
 *
 * @example
 * ```ts
 * try { await governor.acquire("llm"); }
 * catch (error) { if (error instanceof SluiceError && error.code === "too_many_requests") retryLater(); }
 * ```
 */
export class SluiceError extends Error {
  /** Stable across versions: match on it (the HTTP adapters map it to a status). */
  readonly code: SluiceErrorCode;
  declare readonly [SLUICE_ERROR_BRAND]: true;

  constructor(code: SluiceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses keep the ordinary prototype check (`this` is the class `instanceof` asks).
    // biome-ignore lint/complexity/noThisInStatic: which class is asked is the whole point.
    if (this !== SluiceError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === "object" &&
      value !== null &&
      (value as { [SLUICE_ERROR_BRAND]?: unknown })[SLUICE_ERROR_BRAND] === true
    );
  }
}
Object.defineProperty(SluiceError.prototype, SLUICE_ERROR_BRAND, { value: true });

/**
 * A value passed in by the caller is out of range or of the wrong shape. `issues` lists each problem.
 *
 * @example
 * ```ts
 * await governor.acquire("llm", { waitMs: -1 }); // rejects: InvalidArgumentError, code "invalid_argument"
 * ```
 */
export class InvalidArgumentError extends SluiceError {
  /** Every problem found, one sentence each (the message joins them). */
  readonly issues: readonly string[];

  constructor(message: string, issues: readonly string[] = [message]) {
    super("invalid_argument", message);
    this.issues = issues;
  }
}

/**
 * No pool is defined under that name.
 *
 * @example
 * ```ts
 * await governor.acquire("missing"); // rejects: PoolNotFoundError, code "pool_not_found"
 * ```
 */
export class PoolNotFoundError extends SluiceError {
  constructor(
    /** The name asked for. */
    readonly pool: string,
    message = `Pool "${pool}" is not defined.`,
  ) {
    super("pool_not_found", message);
  }
}

/**
 * No budget is defined under that name.
 *
 * @example
 * ```ts
 * await governor.definePool("llm", { maxConcurrent: 4, budget: { id: "missing", reservedConcurrent: 0 } }); // rejects: BudgetNotFoundError
 * ```
 */
export class BudgetNotFoundError extends SluiceError {
  constructor(
    /** The name asked for. */
    readonly budget: string,
  ) {
    super("budget_not_found", `Budget "${budget}" is not defined.`);
  }
}

/** Why an acquire was turned away at once. */
export type RejectionReason = "concurrency" | "queue_full" | "rpm" | "paused" | "budget";

/**
 * No slot now and no queue place (fail-fast, queue full, RPM turn or pause beyond the wait
 * budget). `retryAfterMs` is the governor's best hint of when a retry may succeed;
 * `effectiveLimit` is the pool's effective concurrency limit at the refusal (undefined on an
 * error made outside the governor), so a caller can size its own concurrency from it.
 *
 * @example
 * ```ts
 * try { await governor.acquire("llm"); }
 * catch (error) { if (error instanceof RejectedError) await sleep(error.retryAfterMs); }
 * ```
 */
export class RejectedError extends SluiceError {
  constructor(
    /** Which limit turned the caller away. */
    readonly reason: RejectionReason,
    /** When a retry may succeed: exact for `paused` and `rpm`, a 1 s guess otherwise. */
    readonly retryAfterMs: number,
    /** The pool's effective concurrency limit at the refusal. */
    readonly effectiveLimit?: number,
  ) {
    super("too_many_requests", rejectionMessage(reason, retryAfterMs));
  }
}

function rejectionMessage(reason: RejectionReason, retryAfterMs: number): string {
  const when = `retry in about ${retryAfterMs} ms`;
  switch (reason) {
    case "queue_full":
      return `No free slot and the queue is full; ${when}.`;
    case "rpm":
      return `The pool's requests-per-minute gate is closed; ${when}.`;
    case "paused":
      // A learned Retry-After, or the grace after Redis restarted empty (holders coming back).
      return `The pool is paused (the upstream asked to wait, or shared state is being restored); ${when}.`;
    case "budget":
      return `The budget shared with other pools is exhausted; ${when}.`;
    default:
      return `No free slot; ${when}.`;
  }
}

/**
 * Waited the whole wait budget and no slot opened. `effectiveLimit` is the pool's effective
 * concurrency limit when the wait ended (undefined on an error made outside the governor).
 *
 * @example
 * ```ts
 * await governor.acquire("llm", { waitMs: 5_000 }); // may reject: QueueTimeoutError, code "queue_timeout"
 * ```
 */
export class QueueTimeoutError extends SluiceError {
  constructor(
    /** How long the caller waited in the queue. */
    readonly waitedMs: number,
    /** The pool's effective concurrency limit when the wait ended. */
    readonly effectiveLimit?: number,
    options?: { cause?: unknown },
  ) {
    super("queue_timeout", `No slot opened within ${waitedMs} ms.`, options);
  }
}

/**
 * The caller's AbortSignal fired while waiting for a slot.
 *
 * @example
 * ```ts
 * await governor.acquire("llm", { waitMs: 30_000, signal: AbortSignal.timeout(1_000) }); // may reject: AbortedError
 * ```
 */
export class AbortedError extends SluiceError {
  constructor(reason?: unknown) {
    super("aborted", "The wait for a slot was aborted.", { cause: reason });
  }
}

/**
 * The slot was already released or reclaimed (or never existed in this pool).
 *
 * @example
 * ```ts
 * await governor.release("llm", grant.slotId);
 * await governor.renew("llm", grant.slotId); // rejects: SlotNotFoundError, code "not_found"
 * ```
 */
export class SlotNotFoundError extends SluiceError {
  constructor(
    /** The slot asked for. */
    readonly slotId: string,
  ) {
    super("not_found", "Slot not found: it was released or reclaimed.");
  }
}

/**
 * The slot reached its request deadline; renewing cannot extend it. Release it.
 *
 * @example
 * ```ts
 * try { await governor.renew("llm", slotId); }
 * catch (error) { if (error instanceof SlotCappedError) await governor.release("llm", slotId); }
 * ```
 */
export class SlotCappedError extends SluiceError {
  constructor(
    /** Epoch ms: the slot's hard life cap, reached. */
    readonly requestDeadline: number,
    message = "The slot reached its request-timeout cap; release it.",
  ) {
    super("capped", message);
  }
}

/**
 * The governor was closed: it takes no new work (acquire, run, fetch, renew, definitions),
 * its waiters are turned away, and `run()`/`fetch()` work still holding slots sees its
 * signal abort with this error (their leases are no longer renewed).
 *
 * @example
 * ```ts
 * await governor.close();
 * await governor.acquire("llm"); // rejects: GovernorClosedError, code "closed"
 * ```
 * After `drain()` (and before `close()`) the same error has `draining: true` and says so.
 */
export class GovernorClosedError extends SluiceError {
  /** @param draining true when `drain()` stopped admitting (slots held still finish). */
  constructor(readonly draining = false) {
    super(
      "closed",
      draining
        ? "The governor is draining for shutdown: it admits nothing new while held slots finish."
        : "The governor was closed.",
    );
  }
}

/**
 * The shared slot store (Redis) cannot be reached and the policy is to fail closed (HTTP 503).
 *
 * @example
 * ```ts
 * try { await governor.acquire("llm"); }
 * catch (error) { if (error instanceof StoreUnavailableError) return serveFromCache(); }
 * ```
 */
export class StoreUnavailableError extends SluiceError {
  constructor(message = "The slot store is unavailable.", options?: { cause?: unknown }) {
    super("store_unavailable", message, options);
  }
}

/**
 * A unique name is taken (a pool subdomain of another team, a team slug). HTTP 409.
 *
 * @example
 * ```ts
 * catalog.createTeamWithOwner({ ...input, slug: "acme" }); // throws ConflictError when "acme" exists
 * ```
 */
export class ConflictError extends SluiceError {
  constructor(message: string) {
    super("conflict", message);
  }
}

/**
 * Missing, malformed, expired or revoked credentials (HTTP 401). The message never echoes the
 * credential.
 *
 * @example
 * ```ts
 * if (!key) throw new UnauthorizedError("A pool key is required.");
 * ```
 */
export class UnauthorizedError extends SluiceError {
  constructor(message = "Unauthenticated.") {
    super("unauthorized", message);
  }
}

/**
 * Authenticated, but not allowed (missing ability, read-only key on a write method, IP
 * policy). HTTP 403.
 *
 * @example
 * ```ts
 * if (key.access === "read" && method === "POST") throw new ForbiddenError("This key is read-only.");
 * ```
 */
export class ForbiddenError extends SluiceError {
  constructor(message = "Forbidden.") {
    super("forbidden", message);
  }
}

/**
 * A request body is larger than the endpoint accepts (HTTP 413).
 *
 * @example
 * ```ts
 * if (body.byteLength > 64 * 1024) throw new PayloadTooLargeError(64 * 1024);
 * ```
 */
export class PayloadTooLargeError extends SluiceError {
  constructor(limitBytes: number) {
    super("payload_too_large", `The request body exceeds ${limitBytes} bytes.`);
  }
}

/**
 * A request body in a media type the endpoint does not take (the Lock API takes JSON only, so
 * that a web page cannot send it a body without a CORS preflight). HTTP 415.
 *
 * @example
 * ```ts
 * throw new UnsupportedMediaTypeError("The body must be JSON (Content-Type: application/json).");
 * ```
 */
export class UnsupportedMediaTypeError extends SluiceError {
  constructor(message: string) {
    super("unsupported_media_type", message);
  }
}

/**
 * A request body that did not arrive in time (a client that sent less than it announced, or
 * stalled). HTTP 408.
 *
 * @example
 * ```ts
 * throw new RequestTimeoutError(10_000); // "The request body did not arrive within 10000 ms."
 * ```
 */
export class RequestTimeoutError extends SluiceError {
  constructor(timeoutMs: number) {
    super("request_timeout", `The request body did not arrive within ${timeoutMs} ms.`);
  }
}

/**
 * A database pool's query returned more than the pool allows (rows or bytes); the query was
 * cancelled. HTTP 413.
 *
 * @example
 * ```ts
 * throw new ResultTooLargeError("rows", 10_000);
 * ```
 */
export class ResultTooLargeError extends SluiceError {
  constructor(what: "rows" | "bytes", limit: number) {
    super(
      "result_too_large",
      what === "rows"
        ? `The result has more than ${limit} rows, this pool's limit: the query was cancelled. Narrow it (WHERE, LIMIT) or page through it.`
        : `The result is larger than ${limit} bytes, this pool's limit: the query was cancelled. Select fewer columns or rows.`,
    );
  }
}

/**
 * The upstream of a pool (a database pool's database) could not be reached, refused the
 * pool's connection, or dropped it. HTTP 502.
 *
 * @example
 * ```ts
 * throw new BadGatewayError("The pool's database could not be reached.");
 * ```
 */
export class BadGatewayError extends SluiceError {
  constructor(message: string) {
    super("bad_gateway", message);
  }
}

/**
 * A database pool's database is up but takes no more work now (too many connections, starting
 * up or shutting down): worth a retry soon. HTTP 503.
 *
 * @example
 * ```ts
 * throw new DatabaseBusyError("The database has no connection left for this pool's read role.");
 * ```
 */
export class DatabaseBusyError extends SluiceError {
  constructor(message: string) {
    super("database_busy", message);
  }
}

/**
 * The upstream did not answer within the pool's request timeout (the call was cancelled).
 * HTTP 504.
 *
 * @example
 * ```ts
 * throw new UpstreamTimeoutError("The database did not answer within the pool's request timeout.");
 * ```
 */
export class UpstreamTimeoutError extends SluiceError {
  constructor(message: string) {
    super("upstream_timeout", message);
  }
}

/**
 * An optional package an adapter needs is not installed (the package lists its drivers and
 * the server's HTTP stack as optional dependencies, so a core-only install skips them).
 * `packageName` is what to install.
 *
 * @example
 * ```ts
 * throw new MissingDependencyError("better-sqlite3", "the SQLite catalog");
 * // "the SQLite catalog needs the package better-sqlite3, which is not installed: run `npm install better-sqlite3`."
 * ```
 */
export class MissingDependencyError extends SluiceError {
  /** The package to install. */
  readonly packageName: string;

  constructor(packageName: string, neededBy: string, options?: { cause?: unknown }) {
    super(
      "missing_dependency",
      `${neededBy} needs the package ${packageName}, which is not installed: run \`npm install ${packageName}\`.`,
      options,
    );
    this.packageName = packageName;
  }
}
