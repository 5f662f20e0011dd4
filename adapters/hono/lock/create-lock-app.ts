import type { Context } from "hono";
import { Hono } from "hono";
import type { PoolRecord } from "../../../src/catalog/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import { PayloadTooLargeError } from "../../../src/errors.js";
import type { Governor } from "../../../src/governor/types.js";
import { validateOutcomeReport } from "../../../src/learning/parse-outcome.js";
import type { OutcomeReport } from "../../../src/learning/types.js";
import { logFailed, logGranted } from "./access-attempt.js";
import { type AdmittedCaller, admitCaller } from "./admit-caller.js";
import type { LockAppDeps } from "./lock-deps.js";
import { grantHeaders, jsonReply, lockErrorResponse } from "./lock-responses.js";
import { clientGoneSignal } from "./node-bindings.js";
import { CatalogPoolDirectory } from "./pool-directory.js";
import { remoteAddressOf } from "./remote-address.js";
import { LOCK_BODY_LIMIT_BYTES, parseOptionalJsonObject, readBodyLimited } from "./request-body.js";
import { waitRequest } from "./wait-options.js";

/**
 * The Concurrency Lock API (contract sections 4.2, 5 and 7) as a Hono app:
 * `POST /pools/{pool}/lock/acquire`, `/{slotId}/renew` and `/{slotId}/release`. Mount it on
 * the lock URL's host only (the server's host router does). Lock traffic shares each pool's
 * limit, queue and RPM gate with proxy traffic, because both go through the same governor.
 *
 * Decisions the contract leaves open:
 * - Every lock route needs a live key of the pool (or none on an open pool), of any access:
 *   a slot is not an upstream call, so a read-only key may hold one.
 * - Release always releases, even when its outcome report is bad: a slot must never leak
 *   because of a client bug. A bad report is still answered as one, so the caller notices:
 *   400 `invalid_request` (malformed JSON, or a field out of range such as a status outside
 *   100-599) with `{ error, message, released, ignored }`, where only the listed fields were
 *   dropped; a body over the size limit answers 413 `payload_too_large`, also after releasing.
 * - Unauthorised requests are not acquire attempts and are not access-logged.
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
  const bodyLimit = deps.bodyLimitBytes ?? LOCK_BODY_LIMIT_BYTES;
  const logError = deps.logError ?? ((error: unknown) => console.error("Lock API error:", error));
  const checks = { directory, ipPolicy: deps.ipPolicy };

  const admit = (c: Context): AdmittedCaller =>
    admitCaller(
      checks,
      c.req.param("pool") ?? "",
      c.req.raw.headers,
      remoteAddressOf(c.env),
      clock.now(),
    );

  const app = new Hono();
  app.post("/pools/:pool/lock/acquire", async (c) => {
    const caller = admit(c);
    const body = parseOptionalJsonObject(await readBodyLimited(c.req.raw, bodyLimit, c.env));
    return acquire(c, { governor, clock, deps }, caller, waitRequest(c.req.raw.headers, body));
  });
  app.post("/pools/:pool/lock/:slotId/renew", async (c) => {
    const { pool } = admit(c);
    const { leaseDeadline } = await governor.renew(pool.subdomain, c.req.param("slotId"));
    return jsonReply({ leaseDeadline }, 200);
  });
  app.post("/pools/:pool/lock/:slotId/release", async (c) => {
    const { pool } = admit(c);
    return release(c, governor, pool, bodyLimit);
  });
  app.notFound(() => jsonReply({ error: "not_found", message: "No such Lock API route." }, 404));
  app.onError((error) => {
    const response = lockErrorResponse(error);
    if (response.status >= 500) logError(error);
    return response;
  });
  return app;
}

async function acquire(
  c: Context,
  parts: { governor: Governor; clock: Clock; deps: LockAppDeps },
  admitted: AdmittedCaller,
  wait: { waitMs: number | undefined; noQueue: boolean },
): Promise<Response> {
  const { governor, clock, deps } = parts;
  const caller = {
    pool: admitted.pool.subdomain,
    keyId: admitted.key?.id ?? null,
    remoteAddress: remoteAddressOf(c.env),
    source: "lock" as const,
  };
  // Only a request that may queue needs to notice its caller leaving.
  const mayQueue = !wait.noQueue && (wait.waitMs ?? 0) > 0;
  const signal = mayQueue ? clientGoneSignal(c.env, c.req.raw) : undefined;
  const startedAt = clock.now();
  let grant: Awaited<ReturnType<Governor["acquire"]>>;
  try {
    grant = await governor.acquire(caller.pool, { ...wait, signal });
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
  c: Context,
  governor: Governor,
  pool: PoolRecord,
  bodyLimit: number,
): Promise<Response> {
  let input: unknown;
  let unreadable: unknown;
  try {
    input = parseOptionalJsonObject(await readBodyLimited(c.req.raw, bodyLimit, c.env));
  } catch (error) {
    // Whatever is wrong with the report, the slot is released below.
    unreadable = error;
  }
  const { report, issues } = validateOutcomeReport(input);
  const { released } = await governor.release(
    pool.subdomain,
    c.req.param("slotId") ?? "",
    hasFields(report) ? report : undefined,
  );
  if (unreadable instanceof PayloadTooLargeError) {
    const message = `${unreadable.message} The slot was released without an outcome report.`;
    return jsonReply({ error: "payload_too_large", message, released }, 413);
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

function hasFields(report: OutcomeReport): boolean {
  for (const _ in report) return true;
  return false;
}
