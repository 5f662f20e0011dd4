import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { RequestError } from "@hono/node-server";
import { FORWARDED_METHODS } from "../hono/proxy/max-forwards.js";

// The requests that never reach an app, or reach it only after a fix-up: absolute-form
// targets, a missing or repeated Host, what Node's parser or the adapter refuses, CONNECT.
// Each is answered in the error shape every other refusal has, marked
// `x-svc-rejected-by: sluice`.

/**
 * A request whose target is in absolute-form (`GET http://chat.pools.example/v1 HTTP/1.1`, as
 * clients configured with Sluice as their HTTP proxy send it) is for the target's host, not
 * the `Host` header's (RFC 9112 3.2.2): the header is made to say so, for the routing and for
 * every app behind it. A target the adapter cannot parse is left for it to refuse.
 */
export function hostFromAbsoluteForm(request: IncomingMessage): void {
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

/**
 * What is wrong with a request target Sluice cannot route (null: nothing): the asterisk form
 * (`OPTIONS *`, a question about the server, not a path of a pool) and absolute targets of
 * other schemes than http and https. The adapter would call both an invalid host.
 *
 * @example
 * ```ts
 * targetProblem("*"); // "The asterisk-form target (OPTIONS *) is not served: ask for a path."
 * ```
 */
export function targetProblem(target: string): string | null {
  if (target[0] === "/" || /^https?:\/\//i.test(target)) return null;
  if (target === "*") return "The asterisk-form target (OPTIONS *) is not served: ask for a path.";
  return "The request target must be a path, or an http:// or https:// URL.";
}

/**
 * What is wrong with a request's `Host` header lines (null: nothing): more than one is a 400
 * (RFC 9112 3.2). Node keeps only the first in `headers.host`, and the router would join
 * them into a name no app serves (a 404 that says nothing of the real problem).
 *
 * @example
 * ```ts
 * hostProblem(["Host", "a.test", "Host", "b.test"]); // "The request has 2 Host headers; …"
 * ```
 */
export function hostProblem(rawHeaders: readonly string[]): string | null {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === "host") count++;
  }
  return count > 1
    ? `The request has ${count} Host headers; HTTP/1.1 allows one (RFC 9112 3.2).`
    : null;
}

/** A 400 in the error shape, marked as Sluice's own. */
export function refuse(response: ServerResponse, message: string): void {
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
export function unreadableRequest(error: unknown): Response {
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
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
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
  // An answer to HEAD has no body (RFC 9110 §9.3.2): a client reading one would take the
  // body for the start of a next answer and fail on it.
  endWithRefusal(socket, status, isHeadRequest(error) ? "" : body, "", Buffer.byteLength(body));
}

/** Whether the bytes Node failed on start with a HEAD request line. */
function isHeadRequest(error: NodeJS.ErrnoException): boolean {
  const packet = (error as { rawPacket?: unknown }).rawPacket;
  return Buffer.isBuffer(packet) && packet.subarray(0, 5).toString("latin1") === "HEAD ";
}

const CONNECT_REFUSAL = JSON.stringify({
  error: "method_not_allowed",
  message: "CONNECT is not served: Sluice is a gateway to each pool's origin, not a tunnel.",
});

/**
 * Writes a whole answer in the error shape straight to a socket Node gave up on, and closes
 * it; `length` is the Content-Length (the body's, or for HEAD the body a GET would get).
 */
function endWithRefusal(
  socket: Socket,
  status: string,
  body: string,
  extraHeaders = "",
  length = Buffer.byteLength(body),
): void {
  socket.end(
    `HTTP/1.1 ${status}\r\n${extraHeaders}` +
      "content-type: application/json\r\n" +
      "x-svc-rejected-by: sluice\r\n" +
      `content-length: ${length}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

/**
 * Answers CONNECT (which Node hands to a `connect` listener, or drops the socket without a
 * word) with a 405 in the Lock API's error shape, and closes the connection.
 */
export function refuseConnect(_request: unknown, socket: Socket): void {
  socket.on("error", () => {});
  endWithRefusal(
    socket,
    "405 Method Not Allowed",
    CONNECT_REFUSAL,
    `allow: ${FORWARDED_METHODS}\r\n`,
  );
}
