import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { deferContinue } from "../hono/lock/expect-continue.js";
import { BODY_TIMEOUT_MS } from "../hono/lock/request-body.js";
import type { FetchApp } from "./host-router.js";
import {
  answerClientError,
  hostFromAbsoluteForm,
  hostProblem,
  refuse,
  refuseConnect,
  targetProblem,
  unreadableRequest,
} from "./http-edges.js";

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
  /** How long a request's head may take to arrive (then 408). Default {@link BODY_TIMEOUT_MS}. */
  headersTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open. Default {@link BODY_TIMEOUT_MS}. */
  keepAliveTimeoutMs?: number;
}): Promise<HttpListener> {
  let inFlight = 0;
  let closing = false;
  const listener = getRequestListener((request, env) => options.app.fetch(request, env), {
    hostname: options.hostname,
    errorHandler: unreadableRequest,
  });
  const headersTimeout = options.headersTimeoutMs ?? BODY_TIMEOUT_MS;
  const serverOptions = {
    // Node would answer an HTTP/1.1 request without Host itself, with a bare 400: it is
    // answered here instead, in the error shape.
    requireHostHeader: false,
    headersTimeout,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? BODY_TIMEOUT_MS,
    // Node looks for expired heads every 30 s by default, which would let a stalled client
    // hold its connection for up to 30 s past the header timeout.
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
  };
  const server = createServer(serverOptions, (request, response) => {
    const problem = targetProblem(request.url ?? "") ?? hostProblem(request.rawHeaders);
    if (problem !== null) {
      refuse(response, problem);
      return;
    }
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
