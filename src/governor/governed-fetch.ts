import type { OutcomeReport } from "../learning/types.js";
import type { LocalHold } from "./local-hold.js";

/**
 * Calls `fetch` inside a held slot and keeps the slot until the response body is fully read
 * or cancelled, or the hold stops (its request deadline, an abort), then releases it with the
 * response's status and headers as the outcome (so the governor learns rate limits by itself).
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
  const body = releaseWhenDone(response.body, () => hold.finish(outcome));
  // A body nobody reads or cancels would never end: when the hold stops (request deadline,
  // slot lost, caller abort, pool removed) the slot is released there, with the outcome.
  hold.addAbortListener(() => void hold.finish(outcome));
  const governed = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // What a new Response cannot be given: the caller still sees where the body came from.
  Object.defineProperty(governed, "url", { value: response.url });
  Object.defineProperty(governed, "redirected", { value: response.redirected });
  Object.defineProperty(governed, "type", { value: response.type });
  return governed;
}

/** Passes the stream through chunk by chunk (no buffering) and calls `done` once at its end. */
function releaseWhenDone(
  source: ReadableStream<Uint8Array>,
  done: () => unknown,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
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
