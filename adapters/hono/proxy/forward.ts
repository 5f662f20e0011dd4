import type { IncomingMessage, ServerResponse } from "node:http";
import type { UpstreamCredential } from "../../../src/catalog/pool-secrets.js";
import type { Clock } from "../../../src/clock/clock.js";
import {
  GovernorClosedError,
  PoolNotFoundError,
  SlotCappedError,
  SlotNotFoundError,
} from "../../../src/errors.js";
import type { OutcomeReport } from "../../../src/learning/types.js";
import { CLIENT_CLOSED_REQUEST } from "../error-status.js";
import { grantHeaders, sluiceReply } from "../lock/lock-responses.js";
import { pipeToNodeResponse } from "./node-response.js";
import { clientResponseHeaders, type ResponseHeaderRecord } from "./response-headers.js";
import { streamUpstreamBody } from "./response-stream.js";
import type { SlotHold } from "./slot-hold.js";
import { callUpstream, type UpstreamCall } from "./upstream-call.js";

/** The origin did not answer within the pool's request timeout. */
class UpstreamTimeoutError extends Error {
  constructor() {
    super("The origin did not answer within the pool's request timeout.");
  }
}

/** Statuses whose responses never have a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** One proxied exchange inside a held slot. */
export interface ForwardInput {
  hold: SlotHold;
  clock: Clock;
  credential: UpstreamCredential | null;
  /** The origin request. */
  call: UpstreamCall;
  /** Subscribes to the client going away (see `onClientGone`); returns the unsubscribe. */
  watchClient: (listener: (reason: Error) => void) => () => void;
  /** On `@hono/node-server`: the response to pipe the origin's answer into directly. */
  nodeResponse?: ServerResponse | undefined;
}

/**
 * Sends the request to the origin inside the held slot and returns the client's response.
 * The slot stays held until the response body ends, fails, or the client goes away, and is
 * then released with the origin's status and headers as the outcome (so proxy traffic feeds
 * learning). The origin gets until the slot's request deadline (the pool's request timeout):
 * a late answer is a 504 `upstream_timeout`, an unreachable origin a 502 `bad_gateway`.
 *
 * @example
 * ```ts
 * return forwardInSlot({ hold, clock, credential, watchClient, call: { origin, method, pathAndQuery, headers, body, agents } });
 * ```
 */
export async function forwardInSlot(input: ForwardInput): Promise<Response> {
  const { hold, clock } = input;
  const exchange = callUpstream(input.call);
  let abortReason: unknown;
  const abort = (reason: unknown) => {
    if (abortReason !== undefined) return;
    abortReason = reason;
    exchange.abort(reason instanceof Error ? reason : new Error(String(reason)));
  };
  const onHoldAbort = () => abort(hold.signal.reason);
  if (hold.signal.aborted) onHoldAbort();
  else hold.signal.addEventListener("abort", onHoldAbort, { once: true });
  const stopWatchingClient = input.watchClient(abort);
  const timer = clock.setTimeout(
    () => abort(new UpstreamTimeoutError()),
    Math.max(0, hold.grant.requestDeadline - clock.now()),
  );
  let finished = false;
  const finish = (outcome?: OutcomeReport) => {
    if (finished) return;
    finished = true;
    clock.clearTimeout(timer);
    hold.signal.removeEventListener("abort", onHoldAbort);
    stopWatchingClient();
    hold.end(outcome);
  };

  let upstream: IncomingMessage;
  try {
    upstream = await exchange.response;
  } catch {
    finish();
    return failureResponse(abortReason, hold, clock.now());
  }
  const status = upstream.statusCode ?? 502;
  const outcome: OutcomeReport = { status, headers: upstream.headers };
  const headers = clientResponseHeaders(
    upstream.rawHeaders,
    input.credential,
    hold.grant,
    upstream.httpVersion,
  );
  const bodyless = input.call.method === "HEAD" || NULL_BODY_STATUSES.has(status);
  if (input.nodeResponse) {
    return pipeToNodeResponse(input.nodeResponse, upstream, status, headers, bodyless, () =>
      finish(outcome),
    );
  }
  if (bodyless) {
    upstream.resume();
    finish(outcome);
    return new Response(null, responseInit(status, headers));
  }
  const body = streamUpstreamBody(upstream, () => finish(outcome));
  return new Response(body, responseInit(status, headers));
}

/**
 * `@hono/node-server` hands a plain header record to `writeHead` as is, so repeated
 * headers (arrays) stay separate lines and no default Content-Type is invented.
 */
function responseInit(status: number, headers: ResponseHeaderRecord): ResponseInit {
  return { status, headers: headers as unknown as Record<string, string> };
}

function failureResponse(reason: unknown, hold: SlotHold, now: number): Response {
  const headers = grantHeaders(hold.grant);
  const aborted = reason !== undefined;
  // At the request deadline the lease ends too, so the store may reclaim the slot in the
  // same instant as the timeout fires: either way the origin was too slow.
  const late = aborted && now >= hold.grant.requestDeadline;
  if (late || reason instanceof UpstreamTimeoutError || reason instanceof SlotCappedError) {
    const message = new UpstreamTimeoutError().message;
    return sluiceReply({ error: "upstream_timeout", message }, 504, headers);
  }
  if (reason instanceof PoolNotFoundError) {
    const message = "The pool was deleted while the request ran.";
    return sluiceReply({ error: "not_found", message }, 404, headers);
  }
  if (reason instanceof GovernorClosedError) {
    const message = "The server is stopping; the request was cut off.";
    return sluiceReply({ error: "shutting_down", message }, 503, {
      ...headers,
      "retry-after": "1",
    });
  }
  if (reason instanceof SlotNotFoundError) {
    // Only when this process stalled for a whole term: the slot went to someone else.
    const message = "The slot was reclaimed before the origin answered.";
    return sluiceReply({ error: "slot_lost", message }, 503, headers);
  }
  if (aborted) {
    return sluiceReply(
      { error: "aborted", message: "The client went away." },
      CLIENT_CLOSED_REQUEST,
      headers,
    );
  }
  const message = "The origin could not be reached.";
  return sluiceReply({ error: "bad_gateway", message }, 502, headers);
}
