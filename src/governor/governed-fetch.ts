import type { OutcomeReport } from "../learning/types.js";
import type { LocalHold } from "./local-hold.js";

/** Answers that tell the governor to back off (429, 503): learned as soon as they arrive. */
const BACK_OFF_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** A back-off answer's body is read up to this much before the response is handed over. */
const BACK_OFF_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Calls `fetch` inside a held slot and keeps the slot until the response body is fully read
 * or cancelled, or the hold stops (its request deadline, an abort), then releases it with the
 * response's status and headers as the outcome (so the governor learns rate limits by itself).
 * A 429 or 503 is the exception: its (short) body is read before the response is handed over
 * and the slot released at once, so its pause or lower limit holds before the caller even
 * looks at it, whether or not it reads the body (`if (res.status === 429) retry()`).
 *
 * @example
 * ```ts
 * const response = await fetchWithinHold(hold, "https://api.example.com/v1/chat", { method: "POST" });
 * ```
 */
export async function fetchWithinHold(
  hold: LocalHold,
  input: string | URL | Request,
  init: RequestInit,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(input, { ...init, signal: hold.signal });
  } catch (error) {
    await hold.finish();
    throw error;
  }
  const outcome: OutcomeReport = { status: response.status, headers: response.headers };
  if (!response.body) {
    await hold.finish(outcome);
    return response;
  }
  const reader = response.body.getReader();
  const head: Uint8Array[] = [];
  if (BACK_OFF_STATUSES.has(response.status)) {
    let ended: boolean;
    try {
      ended = await readUpTo(reader, head, BACK_OFF_BODY_LIMIT_BYTES);
    } catch (error) {
      await hold.finish(outcome);
      throw error;
    }
    if (ended) {
      await hold.finish(outcome);
      return governedResponse(response, streamOf(head));
    }
  }
  const body = releaseWhenDone(reader, head, () => hold.finish(outcome));
  // A body nobody reads or cancels would never end: when the hold stops (request deadline,
  // slot lost, caller abort, pool removed) the slot is released there, with the outcome.
  hold.addAbortListener(() => void hold.finish(outcome));
  return governedResponse(response, body);
}

/** Reads chunks into `into` until the body ends (true) or passes `limitBytes` (false). */
async function readUpTo(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  into: Uint8Array[],
  limitBytes: number,
): Promise<boolean> {
  let size = 0;
  while (size <= limitBytes) {
    const chunk = await reader.read();
    if (chunk.done) return true;
    into.push(chunk.value);
    size += chunk.value.byteLength;
  }
  return false;
}

/** A stream of chunks already in hand. */
function streamOf(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

/** `response` with another body; what a new Response cannot be given is copied over. */
function governedResponse(response: Response, body: ReadableStream<Uint8Array>): Response {
  const governed = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // The caller still sees where the body came from.
  Object.defineProperty(governed, "url", { value: response.url });
  Object.defineProperty(governed, "redirected", { value: response.redirected });
  Object.defineProperty(governed, "type", { value: response.type });
  return governed;
}

/**
 * Passes the stream through chunk by chunk (no buffering; `head`, chunks read already, first)
 * and calls `done` once at its end.
 */
function releaseWhenDone(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  head: Uint8Array[],
  done: () => unknown,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const early = head.shift();
      if (early) {
        controller.enqueue(early);
        return;
      }
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          controller.close();
          await done();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (error) {
        controller.error(error);
        await done();
      }
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason);
      } finally {
        await done();
      }
    },
  });
}
