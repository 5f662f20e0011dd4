import { randomUUID } from "node:crypto";
import { nodeBindings } from "../hono/lock/node-bindings.js";
import type { FetchApp } from "./host-router.js";
import { RepeatLimiter } from "./repeat-limiter.js";
import { type LogFields, type ServerLog, scrubSecrets } from "./server-log.js";

/** Options of {@link observeRequests}. */
export interface RequestLogOptions {
  log: ServerLog;
  /** One access line per request; 5xx answers and origin failures are logged either way. */
  logRequests: boolean;
  /** The pool a request is for (its pool host or Lock API path); null for anything else. */
  poolOf: (request: Request) => string | null;
  /** Called for each 401 and 403 Sluice answers (the metrics count refusals by reason). */
  onAuthRefusal?: (request: Request, status: 401 | 403, response: Response) => void;
  /**
   * Failure lines written per pool and status in a window; the rest are counted and reported
   * in one line when the window ends. Default {@link FAILURE_LINES}.
   */
  failureLines?: { burst: number; windowMs: number };
  now?: () => number;
}

/** Default of {@link RequestLogOptions.failureLines}: 5 lines per pool and status every 10 s. */
export const FAILURE_LINES = { burst: 5, windowMs: 10_000 } as const;

/** What {@link observeRequests} gives the server. */
export interface RequestLog {
  /** `app` (the host router) with every answer observed: the app to serve. */
  observe(app: FetchApp): FetchApp;
  /**
   * Why a request failed (the origin unreachable, a bug): logged with the request's 5xx, or
   * at once when the answer had begun already (an origin that broke off its body).
   */
  reportFailure(request: Request | undefined, cause: unknown): void;
}

interface RequestState {
  readonly startedAt: number;
  readonly env: unknown;
  id: string | null;
  cause: unknown;
  answered: boolean;
}

/**
 * A request carrying its log state under a symbol: a WeakMap keyed by every request costs
 * the garbage collector an ephemeron per request (measured: about a tenth of a proxied
 * request's CPU with the WeakMap and its entry).
 */
type Observed = Request & { [key: symbol]: RequestState | undefined };

/** A request id a client sent is kept when it cannot smuggle anything into a log line. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Wraps the server's app so that every 5xx and every reported failure leaves an error line
 * (method, host, path without its query, pool, request id, status, cause: never a header,
 * a query string or a secret), a flood of them per pool and status cut short by
 * `failureLines` and reported as a count, and with `logRequests` every request an access line once its
 * response ended. The request id is the client's `X-Request-Id` when it is a plain token,
 * else a fresh UUID, made only when a line is written.
 *
 * @example
 * ```ts
 * const requests = observeRequests({ log, logRequests: true, poolOf });
 * await listenHttp({ app: requests.observe(router), hostname: "127.0.0.1", port: 0 });
 * ```
 */
export function observeRequests(options: RequestLogOptions): RequestLog {
  const { log, logRequests, poolOf } = options;
  const now = options.now ?? Date.now;
  // Each wrap has its own key, so two observers of one request keep their own state.
  const STATE = Symbol("request log state");
  const { burst, windowMs } = options.failureLines ?? FAILURE_LINES;
  const failures = new RepeatLimiter({
    burst,
    windowMs,
    onHeldBack(key, count) {
      const [pool, status] = JSON.parse(key) as [string | null, number];
      log.warn("Similar request failures not logged", {
        pool,
        status,
        notLogged: count,
        withinSeconds: windowMs / 1_000,
      });
    },
  });

  function fieldsOf(request: Request, state: RequestState, status: number | null): LogFields {
    state.id ??= clientRequestId(request) ?? randomUUID();
    const url = new URL(request.url);
    return {
      method: request.method,
      host: url.host,
      path: url.pathname,
      status,
      pool: poolOf(request),
      requestId: state.id,
    };
  }

  function logFailure(request: Request, state: RequestState, status: number, body?: Response) {
    const fields = fieldsOf(request, state, status);
    if (!failures.allow(JSON.stringify([fields.pool, status]))) return;
    if (state.cause !== undefined) {
      // A 500 is a fault of Sluice's: where it happened is worth the line's length.
      const stack = status === 500 && state.cause instanceof Error ? state.cause.stack : undefined;
      log.error("Request failed", {
        ...fields,
        cause: describeCause(state.cause),
        stack: stack && scrubSecrets(stack.split("\n").slice(1, 6).join(" | ").trim()),
      });
      return;
    }
    if (body && body.headers.get("x-svc-rejected-by") === "sluice") {
      // Sluice's own answer without a reported cause: its message says what went wrong.
      void body
        .clone()
        .json()
        .then(
          (parsed) => String((parsed as { message?: unknown } | null)?.message ?? "no message"),
          () => "no readable message",
        )
        .then((message) => log.error("Request failed", { ...fields, cause: message }));
      return;
    }
    // Every answer of Sluice's own carries the mark or reports its cause: this one is the origin's.
    const cause = fields.pool === null ? "no cause reported" : `the origin answered ${status}`;
    log.error("Request failed", { ...fields, cause });
  }

  function answered(request: Request, state: RequestState, response: Response): Response {
    state.answered = true;
    const { outgoing } = nodeBindings(state.env);
    // The proxy writes straight into the Node response: its status is already there.
    const status = outgoing?.headersSent ? outgoing.statusCode : response.status;
    if (status >= 500 || state.cause !== undefined) {
      logFailure(request, state, status, outgoing?.headersSent ? undefined : response);
    }
    if ((status === 401 || status === 403) && options.onAuthRefusal) {
      options.onAuthRefusal(request, status, response);
    }
    if (logRequests) {
      const access = () => {
        const fields = fieldsOf(request, state, outgoing ? outgoing.statusCode : status);
        log.info("Request", { ...fields, durationMs: now() - state.startedAt });
      };
      // The proxy may have ended its response already (a small answer written in one go).
      if (outgoing && !outgoing.writableFinished) outgoing.once("close", access);
      else access();
    }
    return response;
  }

  return {
    observe: (app) => ({
      fetch(request, env) {
        const state: RequestState = {
          startedAt: now(),
          env,
          id: null,
          cause: undefined,
          answered: false,
        };
        (request as Observed)[STATE] = state;
        const response = app.fetch(request, env);
        return response instanceof Promise
          ? response.then((settled) => answered(request, state, settled))
          : answered(request, state, response);
      },
    }),
    reportFailure(request, cause) {
      const state = request && (request as Observed)[STATE];
      if (request === undefined || state === undefined) {
        log.error("Request failed", { cause: describeCause(cause) });
        return;
      }
      state.cause = cause;
      if (!state.answered) return;
      const { outgoing } = nodeBindings(state.env);
      const fields = fieldsOf(request, state, outgoing?.statusCode ?? null);
      log.error("Response cut off", { ...fields, cause: describeCause(cause) });
    },
  };
}

function clientRequestId(request: Request): string | null {
  const sent = request.headers.get("x-request-id");
  return sent !== null && CLIENT_REQUEST_ID.test(sent) ? sent : null;
}

/**
 * One line on why something failed: the error's code and message, and those of its cause
 * (undici wraps the socket error), with anything secret-looking hidden.
 *
 * @example
 * ```ts
 * describeCause(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }));
 * // "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9"
 * ```
 */
export function describeCause(cause: unknown): string {
  const parts: string[] = [];
  for (let error = cause, depth = 0; error !== undefined && depth < 3; depth++) {
    if (!(error instanceof Error)) {
      parts.push(String(error));
      break;
    }
    const code = (error as NodeJS.ErrnoException).code;
    const { message } = error;
    // A wrapper that already quotes its cause (the JWKS outage's message does) says it once.
    if (message === "" || !parts.some((part) => part.includes(message))) {
      parts.push(code && !message.includes(code) ? `${code}: ${message}` : message);
    }
    error = error.cause;
  }
  return scrubSecrets(parts.join(" <- ").replace(/[\r\n]+/g, " "));
}
