import type { IncomingMessage } from "node:http";
import {
  InvalidArgumentError,
  PayloadTooLargeError,
  RequestTimeoutError,
} from "../../../src/errors.js";
import { JsonBodyError, parseJsonBody } from "../json-body.js";
import { ClientGoneError, nodeBindings } from "./node-bindings.js";

/** Largest Lock API request body (acquire and release). */
export const LOCK_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * How long a Lock or Control API body (16 KiB at most) may take to arrive once the request
 * head is in. A client that sent less than its `Content-Length` would otherwise hold its
 * connection (and, on release, its slot's answer) until Node's own request timeout.
 */
export const BODY_TIMEOUT_MS = 10_000;

/** Limits of {@link readBodyLimited}. */
export interface BodyLimits {
  maxBytes: number;
  /** Default {@link BODY_TIMEOUT_MS}. */
  timeoutMs?: number;
}

const EMPTY = new Uint8Array(0);

/**
 * Reads a request body, refusing more than `maxBytes` with {@link PayloadTooLargeError}:
 * at once when `Content-Length` says so, else as soon as the streamed bytes pass the limit
 * (so a chunked upload cannot make the server buffer more than the limit). A body not in
 * within `timeoutMs` is a {@link RequestTimeoutError}, and the connection is closed after the
 * answer (the rest of the body would be read as the next request). Pass the app's `env`: on
 * `@hono/node-server` the Node request stream is read directly, which spares building a
 * full web Request for every call.
 *
 * @example
 * ```ts
 * const bytes = await readBodyLimited(c.req.raw, { maxBytes: 16 * 1024 }, c.env);
 * ```
 */
export async function readBodyLimited(
  request: Request,
  limits: BodyLimits,
  env?: unknown,
): Promise<Uint8Array> {
  const { maxBytes, timeoutMs = BODY_TIMEOUT_MS } = limits;
  const { incoming, outgoing } = nodeBindings(env);
  const declared = incoming
    ? incoming.headers["content-length"]
    : request.headers.get("content-length");
  if (declared !== null && declared !== undefined && Number(declared) > maxBytes) {
    throw new PayloadTooLargeError(maxBytes);
  }
  if (declared === "0") return EMPTY;
  const closeAfterAnswer = () => outgoing?.setHeader("connection", "close");
  if (incoming) return readIncoming(incoming, maxBytes, timeoutMs, closeAfterAnswer);
  if (!request.body) return EMPTY;
  const reader = request.body.getReader();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RequestTimeoutError(timeoutMs)), timeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), expired]);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new PayloadTooLargeError(maxBytes);
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof RequestTimeoutError) closeAfterAnswer();
    await reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return joinChunks(chunks, total);
}

function readIncoming(
  incoming: IncomingMessage,
  maxBytes: number,
  timeoutMs: number,
  closeAfterAnswer: () => void,
): Uint8Array | Promise<Uint8Array> {
  if (incoming.readableEnded) return EMPTY;
  // A body that arrived with its head (the usual small one) is in the stream's buffer already:
  // taken in one read, without listeners, a promise or a timer ("end" follows on its own).
  if (
    incoming.complete &&
    incoming.readableFlowing === null &&
    incoming.readableLength <= maxBytes
  ) {
    const buffered = incoming.read() as Buffer | null;
    return buffered ?? EMPTY;
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = () => {
      if (timer) clearTimeout(timer);
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        // The rest is discarded as it arrives; @hono/node-server drains what is left.
        stop();
        reject(new PayloadTooLargeError(maxBytes));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      stop();
      resolve(joinChunks(chunks, total));
    };
    const onError = (error: Error) => {
      stop();
      // The client hung up mid-body: nobody is left to answer, and it is no server error.
      reject(incoming.destroyed ? new ClientGoneError() : error);
    };
    // A body that arrived with its head (the usual small one) is read at once: no timer.
    const timer = incoming.complete
      ? null
      : setTimeout(() => {
          stop();
          closeAfterAnswer();
          reject(new RequestTimeoutError(timeoutMs));
        }, timeoutMs);
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("error", onError);
  });
}

function joinChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  return chunks.length === 0 ? EMPTY : Buffer.concat(chunks, total);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * An optional JSON object body: empty (or only whitespace) → undefined; a leading byte order
 * mark is dropped. Throws {@link InvalidArgumentError} (400 `invalid_request`) for malformed
 * JSON (bytes that are not UTF-8 included), nesting deeper than 32 levels, or a JSON value
 * that is not an object.
 *
 * @example
 * ```ts
 * parseOptionalJsonObject(new TextEncoder().encode('{"waitMs":100}')); // { waitMs: 100 }
 * ```
 */
export function parseOptionalJsonObject(bytes: Uint8Array): Record<string, unknown> | undefined {
  if (bytes.byteLength === 0) return undefined;
  let value: unknown;
  try {
    // Strict, as the Control API's: a lenient decode would turn bytes that are not UTF-8
    // (so not JSON, RFC 8259 section 8.1) into U+FFFD and accept the body.
    value = parseJsonBody(strictUtf8.decode(bytes));
  } catch (error) {
    throw new InvalidArgumentError(
      error instanceof JsonBodyError ? error.message : "The request body is not valid JSON.",
    );
  }
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError("The request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}
