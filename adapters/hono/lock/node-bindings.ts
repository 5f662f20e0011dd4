import type { IncomingMessage, ServerResponse } from "node:http";

/** The `env` `@hono/node-server` passes to apps (also through the host router). */
interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

/**
 * The Node request and response behind a Hono request, when it runs on `@hono/node-server`.
 *
 * @example
 * ```ts
 * const { incoming } = nodeBindings(c.env);
 * ```
 */
export function nodeBindings(env: unknown): NodeBindings {
  return (env as NodeBindings | undefined) ?? {};
}

/**
 * A signal that aborts when the client goes away before its response has been sent in full.
 * On Node it watches the response socket directly (reading `request.signal` would make
 * `@hono/node-server` build a full Request); elsewhere it is the request's own signal.
 *
 * @example
 * ```ts
 * const gone = clientGoneSignal(c.env, c.req.raw);
 * ```
 */
export function clientGoneSignal(env: unknown, request: Request): AbortSignal {
  const { outgoing } = nodeBindings(env);
  if (!outgoing) return request.signal;
  const controller = new AbortController();
  if (outgoing.destroyed && !outgoing.writableFinished) controller.abort(new ClientGoneError());
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) controller.abort(new ClientGoneError());
  });
  return controller.signal;
}

/** The client closed its connection before its response was complete. */
export class ClientGoneError extends Error {
  constructor() {
    super("The client went away.");
  }
}

/**
 * Calls `listener` once if the client goes away before its response has been sent in full;
 * returns the unsubscribe function. Cheaper than {@link clientGoneSignal} on Node (no
 * AbortController per request).
 *
 * @example
 * ```ts
 * const stop = onClientGone(c.env, c.req.raw, (reason) => upstream.abort(reason));
 * ```
 */
export function onClientGone(
  env: unknown,
  request: Request,
  listener: (reason: ClientGoneError) => void,
): () => void {
  const { outgoing } = nodeBindings(env);
  if (outgoing) {
    const onClose = () => {
      if (!outgoing.writableFinished) listener(new ClientGoneError());
    };
    if (outgoing.destroyed) {
      onClose();
      return () => {};
    }
    outgoing.once("close", onClose);
    return () => outgoing.off("close", onClose);
  }
  const signal = request.signal;
  const onAbort = () => listener(new ClientGoneError());
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}
