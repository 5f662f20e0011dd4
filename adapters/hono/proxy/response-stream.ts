import type { IncomingMessage } from "node:http";

/** Bytes buffered toward a slow client before the origin is paused. */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * Passes an origin response body to the client chunk by chunk as it arrives (no
 * buffering beyond back-pressure), and calls `done` exactly once when the body ended, failed,
 * or the client cancelled it (went away). Listening starts at once, so `done` also comes when
 * nobody ever reads the stream and the origin response is destroyed.
 *
 * @example
 * ```ts
 * const body = streamUpstreamBody(upstream, () => hold.end(outcome));
 * return new Response(body, { status: upstream.statusCode, headers });
 * ```
 */
export function streamUpstreamBody(
  upstream: IncomingMessage,
  done: () => void,
): ReadableStream<Uint8Array> {
  let settled = false;
  const settle = () => {
    if (settled) return false;
    settled = true;
    done();
    return true;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        upstream.on("data", (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 1) <= 0) upstream.pause();
        });
        upstream.once("end", () => {
          if (settle()) controller.close();
        });
        // The "close" below reports failures; this listener keeps them from being thrown.
        upstream.on("error", () => {});
        // "close" without "end": the origin (or our abort) cut the body short.
        upstream.once("close", () => {
          if (settle()) controller.error(new Error("The origin response ended early."));
        });
      },
      pull() {
        upstream.resume();
      },
      cancel() {
        settle();
        upstream.destroy();
      },
    },
    { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
}
