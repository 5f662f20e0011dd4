import { type Context, Hono } from "hono";
import type { PoolRecord } from "../../../src/catalog/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import {
  PayloadTooLargeError,
  PoolNotFoundError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
} from "../../../src/errors.js";
import type { Governor } from "../../../src/governor/types.js";
import { validateOutcomeReport } from "../../../src/learning/parse-outcome.js";
import type { OutcomeReport } from "../../../src/learning/types.js";
import { type AdmittedCaller, admitCaller } from "../caller/admit-caller.js";
import {
  callerPolicyChecks,
  enforceCallerPolicies,
  loggedAddress,
} from "../caller/caller-policies.js";
import { remoteAddressOf, sentTarget } from "../caller/remote-address.js";
import { lockApiError } from "../error-status.js";
import { logFailed, logGranted } from "./access-attempt.js";
import { createOriginPolicy, requireJsonBody } from "./cross-site.js";
import type { LockAppDeps } from "./lock-deps.js";
import { grantHeaders, jsonReply, respondToError } from "./lock-responses.js";
import { type LockRoute, matchLockRoute, pathOfUrl } from "./lock-routes.js";
import { clientGoneSignal } from "./node-bindings.js";
import { CatalogPoolDirectory } from "./pool-directory.js";
import {
  BODY_TIMEOUT_MS,
  type BodyLimits,
  LOCK_BODY_LIMIT_BYTES,
  parseOptionalJsonObject,
  readBodyLimited,
} from "./request-body.js";
import { type HeaderLookup, requestHeaders } from "./request-headers.js";
import { waitRequest } from "./wait-options.js";

const RELEASING = Object.freeze({ release: true });

/**
 * The Concurrency Lock API (contract sections 4.2, 5 and 7) as a Hono app:
 * `POST /pools/{pool}/lock/acquire`, `/{slotId}/renew` and `/{slotId}/release`. Mount it on
 * the lock URL's host only (the server's host router does). Lock traffic shares each pool's
 * limit, queue and RPM gate with proxy traffic, because both go through the same governor.
 *
 * Decisions the contract leaves open:
 * - Every lock route needs a live key of the pool (or none on an open pool), of any access:
 *   a slot is not an upstream call, so a read-only key may hold one. Release also takes a
 *   key of the pool revoked or expired since: its slot would otherwise stay taken until its
 *   lease ran out. Renew does not (401): a retired key holds no slot longer.
 * - Release always releases, even when its outcome report is bad: a slot must never leak
 *   because of a client bug. A bad report is still answered as one, so the caller notices:
 *   400 `invalid_request` (malformed JSON, or a field out of range such as a status outside
 *   100-599) with `{ error, message, released, ignored }`, where only the listed fields were
 *   dropped; a body over the size limit answers 413 `payload_too_large`, and one that does
 *   not arrive within the body timeout 408 `request_timeout`, both after releasing.
 * - Acquire also passes the pool's caller policies (`docs/caller-policies.md`; renew and
 *   release do not): a refusal is access-logged as `refused` with the policy. Requests
 *   refused for their key are not acquire attempts and are not access-logged.
 * - A pool that does not exist answers every route with the 401 `unauthorized` an existing
 *   pool needing a key would give (the same body): a caller without a valid key learns
 *   nothing about which pools exist. This includes a release on a pool deleted while its
 *   slot was held (its keys went with it). A pool the governor dropped before the catalog
 *   caught up answers a release with 200 `{ released: false }`: its slot is gone with it.
 * - Another method than POST on a lock route answers 405 `method_not_allowed` with
 *   `Allow: POST`, before any key check (the route's method is no secret); a CORS preflight
 *   (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered instead.
 * - Cross-site requests (see {@link createOriginPolicy}): a request whose `Origin` is neither
 *   its own nor in `corsOrigins` answers 403 `unauthorized` before anything else; a body
 *   not declared `application/json` answers 415 `unsupported_media_type` (a release still
 *   releases, and says so in `released`). Both keep web pages elsewhere from taking slots
 *   with "simple" cross-site POSTs, which browsers send without asking.
 *
 * @example
 * ```ts
 * import { serve } from "@hono/node-server";
 * const app = createLockApp({ governor, catalog, accessLog });
 * serve({ fetch: app.fetch, port: 8081 });
 * ```
 */
export function createLockApp(deps: LockAppDeps): Hono {
  const { governor } = deps;
  const clock = deps.clock ?? governor.clock;
  const directory = deps.directory ?? new CatalogPoolDirectory(deps.catalog);
  const bodyLimits: BodyLimits = {
    maxBytes: deps.bodyLimitBytes ?? LOCK_BODY_LIMIT_BYTES,
    timeoutMs: deps.bodyTimeoutMs ?? BODY_TIMEOUT_MS,
  };
  const logError = deps.logError ?? ((error: unknown) => console.error("Lock API error:", error));
  const checks = { directory, ipPolicy: deps.ipPolicy };
  const policyChecks = callerPolicyChecks({
    trustedProxies: deps.trustedProxies,
    nonces: deps.nonces,
    directory,
    accessLog: deps.accessLog,
    clock,
    jwksTimeoutMs: deps.jwksTimeoutMs,
    jwksNetwork: deps.jwksNetwork,
    logError,
  });
  const parts = { governor, clock, deps, bodyLimits };

  const onError = respondToError(logError);
  const origins = createOriginPolicy(deps.corsOrigins);
  const handle = async (
    route: LockRoute,
    request: Request,
    env: unknown,
    headers: HeaderLookup,
  ): Promise<Response> => {
    try {
      const address = remoteAddressOf(env);
      const purpose = route.action === "release" ? RELEASING : undefined;
      const caller = await admitCaller(checks, route.pool, headers, address, clock.now(), purpose);
      if (route.action === "acquire") {
        let bytes: Uint8Array | undefined;
        const readBody = async () => {
          bytes ??= await readJsonBody(request, env, headers, parts);
          return bytes;
        };
        if (caller.pool.callerPolicies !== null) {
          await enforceCallerPolicies(policyChecks, caller, {
            headers,
            peer: address,
            source: "lock",
            method: request.method,
            target: sentTarget(request, env),
            body: readBody,
          });
        }
        const body = parseOptionalJsonObject(await readBody());
        const wait = waitRequest(headers, body);
        const logged = loggedAddress(policyChecks, address, headers);
        return await acquire(request, env, parts, { ...caller, address: logged }, wait);
      }
      if (route.action === "renew") {
        // Its body is empty, and read only to be refused when it is not (a cross-site POST).
        await readJsonBody(request, env, headers, parts);
        const { leaseDeadline } = await governor.renew(caller.pool.subdomain, route.slotId);
        return jsonReply({ leaseDeadline }, 200);
      }
      return await release(request, env, headers, parts, caller.pool, route.slotId);
    } catch (error) {
      // A slot of a pool deleted meanwhile is simply gone (contract 7: release has no errors).
      if (route.action === "release" && error instanceof PoolNotFoundError) {
        return jsonReply({ released: false }, 200);
      }
      return onError(error, request);
    }
  };
  const serve = async (route: LockRoute, request: Request, env: unknown): Promise<Response> => {
    const headers = requestHeaders(env, request);
    let origin: string | null;
    try {
      origin = origins.admit(headers, request.url);
    } catch (error) {
      return onError(error);
    }
    const response = await handle(route, request, env, headers);
    return origin === null ? response : origins.decorate(response, origin);
  };
  const preflight = (c: Context) =>
    origins.preflight(requestHeaders(c.env, c.req.raw), c.req.url) ?? methodNotAllowed();

  const app = new Hono();
  app.post("/pools/:pool/lock/acquire", (c) =>
    serve({ action: "acquire", pool: c.req.param("pool") }, c.req.raw, c.env),
  );
  app.options("/pools/:pool/lock/acquire", preflight);
  app.all("/pools/:pool/lock/acquire", methodNotAllowed);
  for (const action of ["renew", "release"] as const) {
    const path = `/pools/:pool/lock/:slotId/${action}` as const;
    app.post(path, (c) =>
      serve({ action, pool: c.req.param("pool"), slotId: c.req.param("slotId") }, c.req.raw, c.env),
    );
    app.options(path, preflight);
    app.all(path, methodNotAllowed);
  }
  app.notFound(() => jsonReply({ error: "not_found", message: "No such Lock API route." }, 404));
  app.onError((error, c) => onError(error, c.req.raw));
  // The three routes skip Hono's router and Context (a measurable share of a lock call);
  // anything else (other methods, escaped paths, unknown routes) goes through Hono.
  const routed = app.fetch;
  app.fetch = (request, env, executionContext) => {
    const route = request.method === "POST" ? matchLockRoute(pathOfUrl(request.url)) : null;
    return route ? serve(route, request, env) : routed(request, env, executionContext);
  };
  return app;
}

/** A lock route asked with another method than POST: named as such, not a 404. */
function methodNotAllowed(): Response {
  const message = "Lock API routes take POST only.";
  return jsonReply({ error: "method_not_allowed", message }, 405, { allow: "POST" });
}

/** What the route handlers share. */
interface LockParts {
  governor: Governor;
  clock: Clock;
  deps: LockAppDeps;
  bodyLimits: BodyLimits;
}

async function acquire(
  request: Request,
  env: unknown,
  parts: LockParts,
  admitted: AdmittedCaller & { address: string | null },
  wait: { waitMs: number | undefined; noQueue: boolean },
): Promise<Response> {
  const { governor, clock, deps } = parts;
  const caller = {
    pool: admitted.pool.subdomain,
    keyId: admitted.key?.id ?? null,
    remoteAddress: admitted.address,
    source: "lock" as const,
  };
  // Only a request that may queue needs to notice its caller leaving.
  const mayQueue = !wait.noQueue && (wait.waitMs ?? 0) > 0;
  const signal = mayQueue ? clientGoneSignal(env, request) : undefined;
  const startedAt = clock.now();
  let grant: Awaited<ReturnType<Governor["acquire"]>>;
  try {
    grant = await governor.acquire(caller.pool, {
      waitMs: wait.waitMs,
      noQueue: wait.noQueue,
      signal,
    });
  } catch (error) {
    logFailed(deps.accessLog, caller, clock.now(), startedAt, error);
    throw error;
  }
  logGranted(deps.accessLog, caller, clock.now(), grant);
  if (signal?.aborted) {
    // The caller left while its grant was on the way: nobody will renew or release it.
    await governor.release(caller.pool, grant.slotId);
  }
  const { slotId, leaseDeadline, requestDeadline, termMs, renewIntervalMs } = grant;
  return jsonReply(
    { slotId, leaseDeadline, requestDeadline, termMs, renewIntervalMs },
    200,
    grantHeaders(grant),
  );
}

async function release(
  request: Request,
  env: unknown,
  headers: HeaderLookup,
  parts: LockParts,
  pool: PoolRecord,
  slotId: string,
): Promise<Response> {
  let input: unknown;
  let unreadable: unknown;
  try {
    input = parseOptionalJsonObject(await readJsonBody(request, env, headers, parts));
  } catch (error) {
    // Whatever is wrong with the report, the slot is released below.
    unreadable = error;
  }
  const { report, issues } = validateOutcomeReport(input);
  const { released } = await parts.governor.release(
    pool.subdomain,
    slotId,
    hasFields(report) ? report : undefined,
  );
  if (
    unreadable instanceof PayloadTooLargeError ||
    unreadable instanceof RequestTimeoutError ||
    unreadable instanceof UnsupportedMediaTypeError
  ) {
    const { status, error } = lockApiError(unreadable);
    const message = `${unreadable.message} ${
      released
        ? "The slot was released without an outcome report."
        : "No slot was held (already released or reclaimed)."
    }`;
    return jsonReply({ error, message, released }, status);
  }
  if (unreadable !== undefined) {
    const why = unreadable instanceof Error ? unreadable.message : "The body could not be read.";
    issues.unshift(`body: ${why} The outcome report was ignored.`);
  }
  if (issues.length === 0) return jsonReply({ released }, 200);
  const message = `Invalid outcome report: ${issues.join("; ").replace(/\.$/, "")}. ${
    released
      ? "The slot was released; only the valid fields were used."
      : "No slot was held (already released or reclaimed)."
  }`;
  return jsonReply({ error: "invalid_request", message, released, ignored: issues }, 400);
}

/** The request body, read within the limits, and refused (415) when not declared JSON. */
async function readJsonBody(
  request: Request,
  env: unknown,
  headers: HeaderLookup,
  parts: LockParts,
): Promise<Uint8Array> {
  const bytes = await readBodyLimited(request, parts.bodyLimits, env);
  requireJsonBody(headers, bytes);
  return bytes;
}

function hasFields(report: OutcomeReport): boolean {
  for (const _ in report) return true;
  return false;
}
