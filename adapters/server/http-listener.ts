import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { getRequestListener, RequestError } from "@hono/node-server";
import { deferContinue } from "../hono/lock/expect-continue.js";
import { FORWARDED_METHODS } from "../hono/proxy/max-forwards.js";
import type { FetchApp } from "./host-router.js";

/** A listening HTTP server with graceful shutdown. */
export interface HttpListener {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  /** Requests whose response has not finished yet. */
  inFlight(): number;
  /**
   * Stops accepting connections, lets in-flight requests finish for up to `graceMs`, then
   * drops the connections still open. Resolves with how many requests were cut off.
   */
  shutdown(graceMs: number): Promise<{ cutOff: number }>;
}

/**
 * Serves a Fetch-style app over Node's HTTP server and tracks in-flight requests at the
 * socket level (so streamed responses count until their last byte).
 *
 * @example
 * ```ts
 * const listener = await listenHttp({ app, hostname: "127.0.0.1", port: 0 });
 * await listener.shutdown(10_000);
 * ```
 */
export async function listenHttp(options: {
  app: FetchApp;
  hostname: string;
  port: number;
}): Promise<HttpListener> {
  let inFlight = 0;
  let closing = false;
  const listener = getRequestListener((request, env) => options.app.fetch(request, env), {
    hostname: options.hostname,
    errorHandler: unreadableRequest,
  });
  // Node would answer an HTTP/1.1 request without Host itself, with a bare 400: it is
  // answered here instead, in the error shape.
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    hostFromAbsoluteForm(request);
    // Host names are case-insensitive (RFC 9110 4.2.3); the adapter refuses a Host header
    // that differs from the lower-cased name its URL parser makes of it.
    const host = request.headers.host;
    if (host !== undefined) {
      request.headers.host = host.toLowerCase();
    } else if (request.httpVersion !== "1.0") {
      // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400. HTTP/1.0 has no Host to send.
      refuse(response, "The request has no Host header (HTTP/1.1 requires one).");
      return;
    }
    void listener(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("connect", refuseConnect);
  server.on("clientError", answerClientError);
  // The app decides when to send 100 Continue: the proxy sends it only once a caller's key
  // passed and its slot is held, so a refused upload is never sent (see continueIfExpected).
  server.on("checkContinue", (request, response) => {
    deferContinue(request);
    server.emit("request", request, response);
  });
  // Requests in flight per open connection. Node's closeIdleConnections() spares a connection
  // that has not sent a request yet (or only part of one), which would hold a shutdown for its
  // whole grace period: here such a connection counts as idle.
  const requestsOn = new Map<Socket, number>();
  server.on("connection", (socket: Socket) => {
    requestsOn.set(socket, 0);
    socket.once("close", () => requestsOn.delete(socket));
  });
  server.on("request", (request, response) => {
    inFlight++;
    const socket = request.socket;
    requestsOn.set(socket, (requestsOn.get(socket) ?? 0) + 1);
    response.once("close", () => {
      inFlight--;
      const left = (requestsOn.get(socket) ?? 1) - 1;
      if (requestsOn.has(socket)) requestsOn.set(socket, left);
      // A finished response leaves a keep-alive socket idle; while closing, drop it at once.
      if (closing && left === 0) socket.destroy();
    });
  });
  const closeIdle = () => {
    for (const [socket, requests] of requestsOn) if (requests === 0) socket.destroy();
  };
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    inFlight: () => inFlight,
    shutdown(graceMs) {
      closing = true;
      return new Promise((resolve) => {
        let cutOff = 0;
        const deadline = setTimeout(() => {
          cutOff = inFlight;
          server.closeAllConnections();
        }, graceMs);
        server.close(() => {
          clearTimeout(deadline);
          resolve({ cutOff });
        });
        closeIdle();
      });
    },
  };
}

/**
 * A request whose target is in absolute-form (`GET http://chat.pools.example/v1 HTTP/1.1`, as
 * clients configured with Sluice as their HTTP proxy send it) is for the target's host, not
 * the `Host` header's (RFC 9112 3.2.2): the header is made to say so, for the routing and for
 * every app behind it. A target the adapter cannot parse is left for it to refuse.
 */
function hostFromAbsoluteForm(request: IncomingMessage): void {
  const target = request.url ?? "";
  if (target[0] === "/" || !/^https?:\/\//i.test(target)) return;
  let authority: string;
  try {
    authority = new URL(target).host;
  } catch {
    return;
  }
  // Schemes are case-insensitive (RFC 3986 3.1); the adapter knows only `http://`/`https://`.
  const schemeEnd = target.indexOf(":");
  request.url = target.slice(0, schemeEnd).toLowerCase() + target.slice(schemeEnd);
  request.headers.host = authority;
  const raw = request.rawHeaders;
  let found = false;
  for (let i = 0; i < raw.length; ) {
    if (raw[i]?.toLowerCase() !== "host") {
      i += 2;
    } else if (found) {
      raw.splice(i, 2);
    } else {
      raw[i + 1] = authority;
      found = true;
      i += 2;
    }
  }
  if (!found) raw.push("Host", authority);
}

/** A 400 in the error shape, marked as Sluice's own. */
function refuse(response: ServerResponse, message: string): void {
  const body = JSON.stringify({ error: "invalid_request", message });
  response.writeHead(400, {
    "content-type": "application/json",
    "x-svc-rejected-by": "sluice",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}

/**
 * A request the HTTP adapter cannot turn into a Fetch request (a request-target such as `*`
 * or one with a backslash, no Host): 400 in the Lock API's error shape rather than a bare
 * one. Anything else thrown before the app answers is a 500 that names nothing internal.
 */
function unreadableRequest(error: unknown): Response {
  const readable = error instanceof RequestError;
  const body = readable
    ? { error: "invalid_request", message: `The request cannot be served: ${error.message}.` }
    : { error: "internal_error", message: "The request failed inside Sluice." };
  return new Response(JSON.stringify(body), {
    status: readable ? 400 : 500,
    headers: { "content-type": "application/json", "x-svc-rejected-by": "sluice" },
  });
}

/** Statuses Node's parser errors are answered with (anything else is a 400). */
const CLIENT_ERRORS: Readonly<Record<string, [status: string, error: string, why: string]>> = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    "408 Request Timeout",
    "request_timeout",
    "the request did not arrive in time",
  ],
  HPE_HEADER_OVERFLOW: [
    "431 Request Header Fields Too Large",
    "invalid_request",
    "its header section is too large",
  ],
};

/**
 * A request Node's HTTP parser refuses (broken framing, such as a body longer than its
 * `Content-Length` read as a next request; oversized headers; a request that never arrived
 * in full) is answered in the error shape, as every other refusal, instead of Node's bare
 * status line; the connection then closes (its byte stream can no longer be trusted).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const response = (socket as { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  if (response && !response.writableEnded) {
    // A pipelined request broke the stream while the one before it is still being answered
    // (a lock grant, maybe): that answer goes out first, then the connection closes.
    response.shouldKeepAlive = false;
    return;
  }
  const [status, code, why] = CLIENT_ERRORS[error.code ?? ""] ?? [
    "400 Bad Request",
    "invalid_request",
    "it is not a well-formed HTTP/1.1 request",
  ];
  const body = JSON.stringify({ error: code, message: `The request cannot be served: ${why}.` });
  socket.end(
    `HTTP/1.1 ${status}\r\n` +
      "content-type: application/json\r\n" +
      "x-svc-rejected-by: sluice\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

const CONNECT_REFUSAL = JSON.stringify({
  error: "method_not_allowed",
  message: "CONNECT is not served: Sluice is a gateway to each pool's origin, not a tunnel.",
});

/**
 * Answers CONNECT (which Node hands to a `connect` listener, or drops the socket without a
 * word) with a 405 in the Lock API's error shape, and closes the connection.
 */
function refuseConnect(_request: unknown, socket: Socket): void {
  socket.on("error", () => {});
  socket.end(
    "HTTP/1.1 405 Method Not Allowed\r\n" +
      `allow: ${FORWARDED_METHODS}\r\n` +
      "content-type: application/json\r\n" +
      "x-svc-rejected-by: sluice\r\n" +
      `content-length: ${Buffer.byteLength(CONNECT_REFUSAL)}\r\n` +
      "connection: close\r\n\r\n" +
      CONNECT_REFUSAL,
  );
}
