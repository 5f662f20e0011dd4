import type { OutcomeReport } from "../learning/types.js";
import type { LocalHold } from "./local-hold.js";

/** Answers that tell the governor to back off (429, 503): learned as soon as they arrive. */
const BACK_OFF_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** A back-off answer's body is read up to this much before the response is handed over, */
const BACK_OFF_BODY_LIMIT_BYTES = 64 * 1024;
/** and for at most this long (one that streams on is handed over as it is). */
const BACK_OFF_BODY_WAIT_MS = 1_000;

/**
 * Calls `fetch` inside a held slot and keeps the slot until the response body is fully read
 * or cancelled, or the hold stops (its request deadline, an abort), then releases it with the
 * response's status and headers as the outcome (so the governor learns rate limits by itself).
 * A 429 or 503 is the exception: it is learned before the response is handed over, so its
 * pause or lower limit holds before the caller even looks at it, whether or not it reads the
 * body (`if (res.status === 429) retry()`); its body is read first too when short and quick,
 * and the slot released at once.
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
  const early: EarlyRead = { chunks: [], pending: null };
  if (BACK_OFF_STATUSES.has(response.status)) {
    let ended: boolean;
    try {
      ended = await readEarly(reader, early);
    } catch (error) {
      await hold.finish(outcome);
      throw error;
    }
    if (ended) {
      await hold.finish(outcome);
      return governedResponse(response, streamOf(early.chunks));
    }
    // A body too long or too slow to wait for: the answer is learned now all the same, and
    // the slot is released when the body ends.
    await hold.learnNow(outcome);
  }
  const body = releaseWhenDone(reader, early, () => hold.finish(outcome));
  // A body nobody reads or cancels would never end: when the hold stops (request deadline,
  // slot lost, caller abort, pool removed) the slot is released there, with the outcome.
  hold.addAbortListener(() => void hold.finish(outcome));
  return governedResponse(response, body);
}

/** What was read of a body before it was handed over: chunks, and a read still under way. */
interface EarlyRead {
  chunks: Uint8Array[];
  pending: ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]> | null;
}

/**
 * Reads a back-off answer's body into `early` until it ends (true), or passes
 * {@link BACK_OFF_BODY_LIMIT_BYTES} or {@link BACK_OFF_BODY_WAIT_MS} (false: a read may still
 * be under way, and is the stream's next).
 */
async function readEarly(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  early: EarlyRead,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), BACK_OFF_BODY_WAIT_MS);
  });
  try {
    let size = 0;
    while (size <= BACK_OFF_BODY_LIMIT_BYTES) {
      early.pending ??= reader.read();
      const chunk = await Promise.race([early.pending, late]);
      if (chunk === "late") return false;
      early.pending = null;
      if (chunk.done) return true;
      early.chunks.push(chunk.value);
      size += chunk.value.byteLength;
    }
    return false;
  } finally {
    clearTimeout(timer);
  }
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
 * Passes the stream through chunk by chunk (no buffering; what was read early first) and
 * calls `done` once at its end.
 */
function releaseWhenDone(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  early: EarlyRead,
  done: () => unknown,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunkReadEarly = early.chunks.shift();
      if (chunkReadEarly) {
        controller.enqueue(chunkReadEarly);
        return;
      }
      try {
        const pending = early.pending;
        early.pending = null;
        const chunk = await (pending ?? reader.read());
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
