import type { IncomingMessage } from "node:http";
import { nodeBindings } from "./node-bindings.js";

/** Requests whose `100 Continue` the server held back for the app to send (or never send). */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Marks a request sent with `Expect: 100-continue` whose `100 Continue` the app decides on,
 * instead of Node answering it at once. Call it from the server's `checkContinue` listener.
 * The app then calls {@link continueIfExpected} before it reads the body; a request refused
 * without one (401, 403, 429…) never had its body sent, and Node closes that connection
 * after the answer so unsent body bytes cannot be read as the next request.
 *
 * @example
 * ```ts
 * server.on("checkContinue", (request, response) => {
 *   deferContinue(request);
 *   server.emit("request", request, response);
 * });
 * ```
 */
export function deferContinue(incoming: IncomingMessage): void {
  awaitingContinue.add(incoming);
}

/**
 * Sends the `100 Continue` a request is waiting for, once: call it when the app is about to
 * read the body (the proxy: once the caller's key passed and its slot is held, so a caller
 * refused or turned away never uploads its body for nothing). Does nothing for a request
 * that did not ask, or whose continue Node sent itself (a server without
 * {@link deferContinue}).
 *
 * @example
 * ```ts
 * const hold = await holdSlot(governor, pool, wait);
 * continueIfExpected(c.env);
 * ```
 */
export function continueIfExpected(env: unknown): void {
  const { incoming, outgoing } = nodeBindings(env);
  if (!incoming || !outgoing || !awaitingContinue.delete(incoming)) return;
  if (!outgoing.headersSent && !outgoing.destroyed) outgoing.writeContinue();
}
