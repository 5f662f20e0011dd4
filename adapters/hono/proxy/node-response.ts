import type { IncomingMessage, ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { ResponseHeaderRecord } from "./response-headers.js";

/**
 * Pipes an origin response straight into Node's server response and tells
 * `@hono/node-server` it was sent. Bytes go through untouched and unbuffered (each chunk is
 * written as it arrives), and a small response leaves in one socket write instead of the
 * three (head, chunk, end) a web-stream body costs. `done` is called once, when the body
 * ended, the origin cut it short (the client connection is then dropped, as nothing else
 * can signal a truncated body after the head), or the client went away (the origin
 * response is then destroyed).
 *
 * @example
 * ```ts
 * return pipeToNodeResponse(outgoing, upstream, 200, headers, false, () => hold.end(outcome));
 * ```
 */
export function pipeToNodeResponse(
  outgoing: ServerResponse,
  upstream: IncomingMessage,
  status: number,
  headers: ResponseHeaderRecord,
  bodyless: boolean,
  done: () => void,
): Response {
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    done();
  };
  outgoing.writeHead(status, headers);
  if (bodyless) {
    upstream.resume();
    outgoing.end();
    settle();
    return RESPONSE_ALREADY_SENT;
  }
  // Failures show up as "close" without "end"; this listener keeps them from being thrown.
  upstream.on("error", () => {});
  upstream.once("end", settle);
  upstream.once("close", () => {
    if (!upstream.complete) outgoing.destroy();
    settle();
  });
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) upstream.destroy();
    settle();
  });
  upstream.pipe(outgoing);
  return RESPONSE_ALREADY_SENT;
}
