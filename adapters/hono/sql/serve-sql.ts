import type { AccessLog } from "../../../src/access-log/types.js";
import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import {
  BadGatewayError,
  DatabaseBusyError,
  PayloadTooLargeError,
  SlotCappedError,
  UpstreamTimeoutError,
} from "../../../src/errors.js";
import type { Governor } from "../../../src/governor/types.js";
import type { OutcomeReport } from "../../../src/learning/types.js";
import { type SqlRunner, SqlStatementError } from "../../postgres-pool/types.js";
import { MAX_LABEL_LENGTH } from "../caller/admit-caller.js";
import { statusForError } from "../error-status.js";
import { createOriginPolicy, requireJsonBody } from "../lock/cross-site.js";
import { continueIfExpected } from "../lock/expect-continue.js";
import { grantHeaders, jsonReply, lockErrorResponse, sluiceReply } from "../lock/lock-responses.js";
import { onClientGone } from "../lock/node-bindings.js";
import type { PoolDirectory } from "../lock/pool-directory.js";
import { readBodyLimited } from "../lock/request-body.js";
import type { HeaderLookup } from "../lock/request-headers.js";
import { waitRequest } from "../lock/wait-options.js";
import { admitToSlot } from "../proxy/slot-admission.js";
import type { SlotHold } from "../proxy/slot-hold.js";
import { requestTarget } from "../proxy/upstream-target.js";
import { stripConnectionString } from "./connection-string-header.js";
import {
  parseSqlBody,
  SQL_BODY_LIMIT_BYTES,
  type SqlBody,
  type SqlOptions,
  sqlOptions,
} from "./sql-request.js";
import { sqlErrorBody, sqlResultBody, sqlRowBytes } from "./sql-response.js";

/** How a proxy serves database pools (`backend: "postgres"`). */
export interface SqlServing {
  /** Runs the queries (`PostgresPools` from `adapters/postgres-pool`). */
  runner: SqlRunner;
  /** Largest `/sql` body; default 1 MiB. */
  bodyLimitBytes?: number;
  /**
   * Web origins whose pages may call `/sql` besides the host's own (the Lock API's
   * `corsOrigins`, `sluice serve --cors-origins`); others are refused with 403.
   */
  corsOrigins?: readonly string[];
}

/** What the SQL handler shares with the proxy. */
export interface SqlHandlerDeps extends SqlServing {
  governor: Governor;
  clock: Clock;
  accessLog: AccessLog | undefined;
  directory: PoolDirectory;
  /**
   * Receives every failure of the pool's database (unreachable, connection lost, busy) with
   * its request, for a server's log: the error's `cause` is the driver's own (the socket
   * error); the client's answer is the proxy's 502 or 503 without it.
   */
  onOriginFailure?: ((request: Request, cause: Error) => void) | undefined;
}

/** A request on a database pool's host, its caller admitted (pool, key, IP policy). */
export interface SqlCall {
  request: Request;
  env: unknown;
  headers: HeaderLookup;
  pool: PoolRecord;
  key: PoolKeyRecord | null;
  remoteAddress: string | null;
  /** The body, when the proxy read it already (a caller policy covers it). */
  body?: Uint8Array | undefined;
}

const SQL_PATH = "/sql";
/** The request headers of Neon's driver, which a page using it sends (its preflight asks for them). */
const NEON_HEADERS = [
  "neon-connection-string",
  "neon-raw-text-output",
  "neon-array-mode",
  "neon-batch-isolation-level",
  "neon-batch-read-only",
  "neon-batch-deferrable",
];

/** Serves a database pool's requests; `preflight` answers a page's CORS preflight first. */
export interface SqlHandler {
  (call: SqlCall): Promise<Response>;
  /**
   * The answer to a CORS preflight (`OPTIONS /sql` with `Access-Control-Request-Method`) on
   * a database pool's host, before any key check (a browser sends none with a preflight):
   * 204 for an admitted origin, 403 for another; null when it is none such (the request
   * then goes the usual way, as for any other pool or a missing one).
   */
  preflight(subdomain: string, request: Request, headers: HeaderLookup): Promise<Response | null>;
}
const TIMEOUT_MESSAGE =
  "The database did not answer within the pool's request timeout: the query was cancelled.";

/**
 * The handler of a database pool's host: `POST /sql` in Neon's HTTP format, each request
 * inside one of the pool's slots (the same limit, queue and RPM gate as the Lock API and the
 * proxy, taken by the same {@link admitToSlot}). In order: 404/405 for any other path or
 * method; the body read (capped) and checked before a slot is taken; the slot; the batch on
 * the database, read-only, cancelled when the client leaves, the slot is lost or the
 * request timeout passes (the slot is freed at once, not when the database has stopped).
 * Answers: 200 with the result(s); 400 with a database error in Neon's shape; Sluice's own
 * refusals in the proxy's shape (`x-svc-rejected-by: sluice`). The outcome feeds learning:
 * too many connections, serialization failures, deadlocks and lock timeouts count as a
 * throttle.
 *
 * @example
 * ```ts
 * const sql = createSqlHandler({ governor, clock, accessLog, directory, runner: new PostgresPools() });
 * if (pool.backend === "postgres") return sql({ request, env, headers, pool, key, remoteAddress });
 * ```
 */
export function createSqlHandler(deps: SqlHandlerDeps): SqlHandler {
  const bodyLimit = deps.bodyLimitBytes ?? SQL_BODY_LIMIT_BYTES;
  const origins = createOriginPolicy(deps.corsOrigins, {
    api: "this database pool",
    extraHeaders: NEON_HEADERS,
  });
  const preflight: SqlHandler["preflight"] = async (subdomain, request, headers) => {
    if (headers.get("access-control-request-method") === null) return null;
    if (requestTarget(request.url).path !== SQL_PATH || subdomain.length > MAX_LABEL_LENGTH) {
      return null;
    }
    const pool = await deps.directory.pool(subdomain);
    if (pool?.backend !== "postgres") return null;
    return origins.preflight(headers, request.url);
  };
  const serve = async (call: SqlCall): Promise<Response> => {
    const { request, env, headers, pool } = call;
    stripConnectionString(request, env);
    // A page elsewhere may not run queries with its visitors' network position (a pool
    // that needs no key): its Origin is refused, as the Lock API refuses it.
    const origin = origins.admit(headers, request.url);
    const path = requestTarget(request.url).path;
    if (path !== SQL_PATH) {
      const message = `A database pool serves POST /sql only (the Neon HTTP format); ${path.slice(0, 100)} is not served here.`;
      return sluiceReply({ error: "not_found", message }, 404);
    }
    if (request.method !== "POST") {
      const message = `A database pool serves POST /sql only; ${request.method.slice(0, 20)} is not allowed.`;
      return sluiceReply({ error: "method_not_allowed", message }, 405, { allow: "POST" });
    }
    const connectionString = deps.directory.databaseUrl(pool);
    if (!pool.database || !connectionString) {
      throw new BadGatewayError("This pool has no database connection configured.");
    }
    const options = sqlOptions(headers);
    const wait = waitRequest(headers);
    continueIfExpected(env);
    const limits = { maxBytes: bodyLimit, timeoutMs: pool.requestTimeoutMs };
    const bytes = call.body ?? (await readBodyLimited(request, limits, env));
    if (bytes.byteLength > bodyLimit) throw new PayloadTooLargeError(bodyLimit);
    // Browsers send text/plain cross-site without asking first; the Neon driver outside a
    // browser sends text/plain too, and no Origin, so only browser requests need JSON.
    if (origin !== null) requireJsonBody(headers, bytes);
    const body = parseSqlBody(bytes);
    const hold = await admitToSlot({ ...deps, ...call, wait });
    const response = await runInSlot(deps, call, hold, { body, options, connectionString });
    return origin === null ? response : origins.decorate(response, origin);
  };
  return Object.assign(serve, { preflight });
}

interface SqlWork {
  body: SqlBody;
  options: SqlOptions;
  connectionString: string;
}

async function runInSlot(
  deps: SqlHandlerDeps,
  call: SqlCall,
  hold: SlotHold,
  work: SqlWork,
): Promise<Response> {
  const { clock } = deps;
  const { pool } = call;
  const database = pool.database as NonNullable<PoolRecord["database"]>;
  const controller = new AbortController();
  // The client leaving, the slot lost, the request timeout: the slot is freed now, and the
  // runner cancels the statement on the database.
  const stop = (reason: unknown) => {
    if (controller.signal.aborted) return;
    const timedOut = reason instanceof SlotCappedError;
    controller.abort(timedOut ? new UpstreamTimeoutError(TIMEOUT_MESSAGE) : reason);
    hold.end();
  };
  const remainingMs = Math.max(1, hold.grant.requestDeadline - clock.now());
  const timer = clock.setTimeout(
    () => stop(new UpstreamTimeoutError(TIMEOUT_MESSAGE)),
    remainingMs,
  );
  const stopWatchingHold = hold.onAbort(stop);
  const stopWatchingClient = onClientGone(call.env, call.request, stop);
  const headers = grantHeaders(hold.grant);
  try {
    const results = await deps.runner.run(
      {
        poolId: pool.id,
        connectionString: work.connectionString,
        maxConnections: pool.maxConcurrent,
      },
      {
        statements: work.body.statements,
        statementTimeoutMs: Math.min(database.statementTimeoutMs, remainingMs),
        maxRows: database.maxRows,
        maxResultBytes: database.maxResultBytes,
        rowBytes: sqlRowBytes(work.options),
        isolation: work.body.batch ? work.options.isolation : undefined,
        deferrable: work.body.batch && work.options.deferrable,
      },
      controller.signal,
    );
    hold.end({ status: 200 });
    const bodies = results.map((result) => sqlResultBody(result, work.options));
    return jsonReply(work.body.batch ? { results: bodies } : bodies[0], 200, headers);
  } catch (error) {
    hold.end(outcomeOf(error));
    if (error instanceof BadGatewayError || error instanceof DatabaseBusyError) {
      deps.onOriginFailure?.(call.request, error);
    }
    if (error instanceof SqlStatementError) {
      return jsonReply(sqlErrorBody(error.fields, database.statementTimeoutMs), 400, headers);
    }
    const response = lockErrorResponse(error);
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } finally {
    clock.clearTimeout(timer);
    stopWatchingHold();
    stopWatchingClient();
  }
}

const THROTTLED: OutcomeReport = { throttled: 1 };

/**
 * What the database's answer teaches adaptive learning. An overloaded or contended database
 * is reported as a throttle without a status, as an upstream's 429 would be: the learner
 * ignores 5xx statuses, and a 503 here means one slot fewer, not a pause.
 */
function outcomeOf(error: unknown): OutcomeReport {
  if (error instanceof DatabaseBusyError) return THROTTLED;
  if (error instanceof SqlStatementError) return error.throttle ? THROTTLED : { status: 400 };
  return { status: statusForError(error) };
}
