import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { UpstreamCredential } from "../../../src/catalog/pool-secrets.js";
import type { Clock, TimerHandle } from "../../../src/clock/clock.js";
import {
  GovernorClosedError,
  PoolNotFoundError,
  SlotCappedError,
  SlotNotFoundError,
} from "../../../src/errors.js";
import type { OutcomeReport } from "../../../src/learning/types.js";
import { CLIENT_CLOSED_REQUEST } from "../error-status.js";
import { grantHeaders, sluiceReply } from "../lock/lock-responses.js";
import { clientResponseHeaders, type ResponseHeaderRecord } from "./response-headers.js";
import type { SlotHold } from "./slot-hold.js";
import {
  callUpstream,
  type UpstreamCall,
  type UpstreamExchange,
  type UpstreamHead,
  type UpstreamSink,
} from "./upstream-call.js";

/** The origin did not answer within the pool's request timeout. */
class UpstreamTimeoutError extends Error {
  constructor() {
    super("The origin did not answer within the pool's request timeout.");
  }
}

/** Bytes buffered toward a slow web-stream reader before the origin is paused. */
const HIGH_WATER_BYTES = 64 * 1024;

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
  /** On `@hono/node-server`: the response to write the origin's answer into directly. */
  nodeResponse?: ServerResponse | undefined;
  /** Told why the origin failed (not when the client left or the slot was taken back). */
  onOriginFailure?: ((cause: Error) => void) | undefined;
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
 * return forwardInSlot({ hold, clock, credential, watchClient, call: { origin, method, pathAndQuery, headers, body, client } });
 * ```
 */
export function forwardInSlot(input: ForwardInput): Promise<Response> {
  return new Promise((resolve) => new ProxiedExchange(input, resolve).start());
}

/**
 * One origin exchange: it answers the client once the response head arrives (or the
 * exchange failed before it), then passes the body on chunk by chunk with back-pressure. On
 * Node the body is written straight into the server response (a small answer leaves in one
 * socket write); elsewhere it feeds a web stream.
 */
class ProxiedExchange implements UpstreamSink {
  private exchange: UpstreamExchange | null = null;
  private abortReason: unknown;
  private finished = false;
  private answered = false;
  private bodyless = false;
  private outcome: OutcomeReport | undefined;
  private timer: TimerHandle | null = null;
  private stopWatchingClient: (() => void) | null = null;
  private stopWatchingHold: (() => void) | null = null;
  private stream: ReadableStreamDefaultController<Uint8Array> | null = null;
  private readonly resumeOrigin = () => this.exchange?.resume();

  constructor(
    private readonly input: ForwardInput,
    private readonly answer: (response: Response) => void,
  ) {}

  start(): void {
    const { hold, clock } = this.input;
    this.exchange = callUpstream(this.input.call, this);
    // undici refused the request outright: answered already, nothing to watch.
    if (this.finished) return;
    this.stopWatchingHold = hold.onAbort((reason) => this.abort(reason));
    this.stopWatchingClient = this.input.watchClient((reason) => this.abort(reason));
    this.timer = clock.setTimeout(
      () => this.abort(new UpstreamTimeoutError()),
      Math.max(0, hold.grant.requestDeadline - clock.now()),
    );
    // The hold or the client may have gone already: the watchers above then ended the
    // exchange before they were stored, so they are dropped here.
    if (this.finished) this.unwatch();
  }

  head(head: UpstreamHead): void {
    const { input } = this;
    // Node would relay 600-999 as given; HTTP defines 100-599 (RFC 9110 15), and a client
    // may choke on anything else.
    if (head.status > 599) throw new OriginStatusError(head.status);
    this.outcome = { status: head.status, headers: head.headers };
    const headers = clientResponseHeaders(head.rawHeaders, input.credential, input.hold.grant);
    const bodyless = input.call.method === "HEAD" || NULL_BODY_STATUSES.has(head.status);
    const node = input.nodeResponse;
    // A head the client side refuses (a status a web Response cannot carry) throws here, before
    // anything was answered: undici then fails the exchange and the client gets 502.
    let response: Response;
    if (node) {
      node.writeHead(head.status, headers);
      response = RESPONSE_ALREADY_SENT;
    } else {
      response = new Response(bodyless ? null : this.webBody(), responseInit(head.status, headers));
    }
    this.answered = true;
    this.bodyless = bodyless;
    this.answer(response);
  }

  data(chunk: Buffer): boolean {
    const node = this.input.nodeResponse;
    if (node) {
      if (node.destroyed || node.write(chunk)) return true;
      node.once("drain", this.resumeOrigin);
      return false;
    }
    const stream = this.stream;
    if (!stream) return true;
    stream.enqueue(chunk);
    return (stream.desiredSize ?? 1) > 0;
  }

  end(): void {
    const node = this.input.nodeResponse;
    if (node) {
      if (!node.destroyed) node.end();
    } else {
      this.stream?.close();
    }
    this.finish(this.outcome);
  }

  fail(error: Error): void {
    const reason = this.abortReason;
    const originsFault =
      reason instanceof UpstreamTimeoutError || reason instanceof SlotCappedError;
    if (reason === undefined || originsFault) {
      this.input.onOriginFailure?.(reason ?? error);
    }
    if (!this.answered) {
      this.finish();
      const { hold, clock, nodeResponse } = this.input;
      // The caller's own upload had not arrived in full: the wait was not the origin's fault.
      const uploadCut = nodeResponse?.req?.complete === false;
      this.answer(failureResponse(this.abortReason, hold, clock.now(), error, uploadCut));
      return;
    }
    // A body the client never gets anyway (HEAD, 204, 304): a 304 may announce a length
    // (RFC 9110 8.6), which undici counts as a body cut short.
    if (this.bodyless) {
      this.end();
      return;
    }
    // After the head, nothing but a dropped connection tells the client its body is cut short.
    this.input.nodeResponse?.destroy();
    this.stream?.error(error);
    this.finish(this.outcome);
  }

  private webBody(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.stream = controller;
        },
        pull: this.resumeOrigin,
        cancel: () => {
          this.stream = null;
          this.abort(new Error("The client cancelled the response body."));
        },
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  private abort(reason: unknown): void {
    if (this.abortReason !== undefined || this.finished) return;
    this.abortReason = reason;
    this.exchange?.abort(reason instanceof Error ? reason : new Error(String(reason)));
  }

  private finish(outcome?: OutcomeReport): void {
    if (this.finished) return;
    this.finished = true;
    this.unwatch();
    this.input.hold.end(outcome);
  }

  private unwatch(): void {
    if (this.timer !== null) this.input.clock.clearTimeout(this.timer);
    this.timer = null;
    this.stopWatchingHold?.();
    this.stopWatchingHold = null;
    this.stopWatchingClient?.();
    this.stopWatchingClient = null;
  }
}

/**
 * Web headers with each value of a repeated header appended on its own: a record with arrays
 * would join them with commas, which breaks `Set-Cookie` (its dates hold commas).
 */
function responseInit(status: number, record: ResponseHeaderRecord): ResponseInit {
  const headers = new Headers();
  for (const name in record) {
    const value = record[name] as string | string[];
    if (typeof value === "string") headers.append(name, value);
    else for (const item of value) headers.append(name, item);
  }
  return { status, headers };
}

function failureResponse(
  reason: unknown,
  hold: SlotHold,
  now: number,
  error: Error,
  uploadCut: boolean,
): Response {
  const headers = grantHeaders(hold.grant);
  const aborted = reason !== undefined;
  // At the request deadline the lease ends too, so the store may reclaim the slot in the
  // same instant as the timeout fires: either way the origin was too slow.
  const late = aborted && now >= hold.grant.requestDeadline;
  const timedOut =
    late || reason instanceof UpstreamTimeoutError || reason instanceof SlotCappedError;
  if (timedOut && uploadCut) {
    // The rest of the body may still come: it would be read as the next request.
    const message =
      "The request body did not arrive within the pool's request timeout; the origin was waiting for it.";
    return sluiceReply({ error: "request_timeout", message }, 408, {
      ...headers,
      connection: "close",
    });
  }
  if (timedOut) {
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
  return sluiceReply({ error: "bad_gateway", message: badGatewayMessage(error) }, 502, headers);
}

/** An origin status HTTP does not define: the exchange fails with 502. */
class OriginStatusError extends Error {
  constructor(status: number) {
    super(`The origin answered with status ${status}, which HTTP does not define (100-599).`);
  }
}

/** Why the origin gave no usable answer, in words that tell the caller where to look. */
function badGatewayMessage(error: Error): string {
  if (error instanceof OriginStatusError) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  if (error.name === "HTTPParserError" || code?.startsWith("HPE_")) {
    return "The origin's answer is not valid HTTP/1.1.";
  }
  if (code === "UND_ERR_RES_CONTENT_LENGTH_MISMATCH") {
    return "The origin's answer is not valid HTTP/1.1: its Content-Length does not match its body.";
  }
  if (code === "UND_ERR_HEADERS_OVERFLOW") return "The origin's answer headers are too large.";
  // Writing the body failed: the origin closed while it was still being sent. It may have
  // answered first (an early 413 or 401), but a closed socket leaves no answer to read.
  if (code === "EPIPE") {
    return "The origin closed the connection before it took the whole request body (it may have refused the body early, for example with 413).";
  }
  if (code === "UND_ERR_SOCKET" || code === "ECONNRESET") {
    return "The origin closed the connection without answering.";
  }
  return "The origin could not be reached.";
}
