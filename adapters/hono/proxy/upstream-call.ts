import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { ParsedOrigin } from "./upstream-target.js";

/** Keep-alive connection pools to origins, one per protocol; closed with the proxy. */
export interface UpstreamAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

/**
 * Keep-alive agents for origin connections (the pool's slots bound how many are busy).
 *
 * @example
 * ```ts
 * const agents = createUpstreamAgents();
 * agents.destroy();
 * ```
 */
export function createUpstreamAgents(): UpstreamAgents {
  const http = new HttpAgent({ keepAlive: true, scheduling: "lifo" });
  const https = new HttpsAgent({ keepAlive: true, scheduling: "lifo" });
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
}

/** A request body: buffered bytes, a Node stream, a web stream, or none. */
export type UpstreamBody = Uint8Array | Readable | ReadableStream<Uint8Array> | null;

/** One origin request. */
export interface UpstreamCall {
  origin: ParsedOrigin;
  method: string;
  /** Path and query appended to the origin's base path. */
  pathAndQuery: string;
  headers: OutgoingHttpHeaders;
  body: UpstreamBody;
  agents: UpstreamAgents;
}

/** An origin request under way. */
export interface UpstreamExchange {
  /** The response head; the body streams from the message. */
  response: Promise<IncomingMessage>;
  /** Destroys the request and, once it has arrived, the response. */
  abort(reason: Error): void;
}

/**
 * Sends a request to an origin with Node's HTTP client. Node's client is used rather than
 * `fetch` because it leaves the bytes alone (no transparent decompression), so responses
 * pass through exactly as the origin sent them; aborting is a plain call rather than an
 * AbortSignal, which saves an allocation per proxied request.
 *
 * @example
 * ```ts
 * const exchange = callUpstream({ origin, method: "GET", pathAndQuery: "/v1/models", headers, body: null, agents });
 * const response = await exchange.response;
 * ```
 */
export function callUpstream(call: UpstreamCall): UpstreamExchange {
  const { origin } = call;
  const https = origin.protocol === "https:";
  const request = (https ? httpsRequest : httpRequest)({
    protocol: origin.protocol,
    hostname: origin.hostname,
    port: origin.port,
    path: origin.basePath + call.pathAndQuery,
    method: call.method,
    headers: call.headers,
    agent: https ? call.agents.https : call.agents.http,
  });
  let message: IncomingMessage | null = null;
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    request.once("response", (arrived) => {
      message = arrived;
      resolve(arrived);
    });
    request.once("error", reject);
  });
  sendBody(request, call.body);
  return {
    response,
    abort(reason) {
      request.destroy(reason);
      message?.destroy(reason);
    },
  };
}

function sendBody(request: ReturnType<typeof httpRequest>, body: UpstreamBody): void {
  if (body === null) {
    request.end();
  } else if (body instanceof Uint8Array) {
    request.end(body);
  } else {
    const source =
      body instanceof Readable ? body : Readable.fromWeb(body as WebReadableStream<Uint8Array>);
    // pipe, not pipeline: a failed origin request must not destroy the caller's request
    // stream (that would drop the client socket before it hears 502). A failed upload
    // (caller gone) destroys the origin request; the error surfaces through it.
    source.once("error", (error) => request.destroy(error));
    request.once("error", () => source.unpipe(request));
    source.pipe(request);
  }
}
