import type { IncomingMessage, ServerResponse } from "node:http";
import { SluiceError } from "../../../src/errors.js";

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
 * A signal for governor calls that aborts when the client goes away before its response has
 * been sent in full, so a queued caller leaves the queue. Elsewhere than Node it is the
 * request's own signal. On Node it watches the response socket directly (reading
 * `request.signal` would make `@hono/node-server` build a full Request) and is a lightweight
 * look-alike rather than a real AbortSignal: building one costs more than the whole acquire.
 * It answers what the governor uses (`aborted`, `reason`, `"abort"` listeners), so give it
 * to the governor, not to `fetch`.
 *
 * @example
 * ```ts
 * const gone = clientGoneSignal(c.env, c.req.raw);
 * const grant = await governor.acquire("llm", { waitMs: 5_000, signal: gone });
 * ```
 */
export function clientGoneSignal(env: unknown, request: Request): AbortSignal {
  const { outgoing } = nodeBindings(env);
  if (!outgoing) return request.signal;
  return new ClientGoneWatch(outgoing) as unknown as AbortSignal;
}

type AbortListener = (event?: unknown) => void;

/** The AbortSignal look-alike behind {@link clientGoneSignal} on Node. */
class ClientGoneWatch {
  private gone: ClientGoneError | null = null;
  private listeners: AbortListener[] | null = null;

  constructor(private readonly outgoing: ServerResponse) {}

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  get reason(): ClientGoneError | undefined {
    if (!this.gone && this.outgoing.destroyed && !this.outgoing.writableFinished) {
      this.gone = new ClientGoneError();
    }
    return this.gone ?? undefined;
  }

  addEventListener(type: string, listener: AbortListener): void {
    if (type !== "abort") return;
    if (!this.listeners) {
      this.listeners = [];
      this.outgoing.once("close", () => this.onClose());
    }
    this.listeners.push(listener);
  }

  removeEventListener(type: string, listener: AbortListener): void {
    const listeners = this.listeners;
    if (type !== "abort" || !listeners) return;
    const index = listeners.indexOf(listener);
    if (index >= 0) listeners.splice(index, 1);
  }

  private onClose(): void {
    const listeners = this.listeners;
    if (this.outgoing.writableFinished || !listeners) return;
    this.gone ??= new ClientGoneError();
    this.listeners = [];
    // Like an AbortSignal, each listener hears it once.
    for (const listener of listeners) listener();
  }
}

/**
 * The client closed its connection before its response was complete: the reason of
 * {@link clientGoneSignal} and of {@link onClientGone}'s call (code `aborted`, like the
 * governor's own `AbortedError`).
 *
 * @example
 * ```ts
 * const signal = clientGoneSignal(c.env, c.req.raw);
 * signal.addEventListener("abort", () => {
 *   if (signal.reason instanceof ClientGoneError) console.log("client left", signal.reason.code);
 * });
 * ```
 */
export class ClientGoneError extends SluiceError {
  constructor() {
    super("aborted", "The client went away.");
  }
}

/**
 * Calls `listener` once if the client goes away before its response has been sent in full;
 * returns the unsubscribe function. The callback form of {@link clientGoneSignal}, for code
 * that gives no signal to the governor.
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
