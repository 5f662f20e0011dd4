/**
 * A response body was longer than the reader allows (a guarded fetch caps what a remote
 * server can make it hold in memory).
 *
 * @example
 * ```ts
 * new BodyTooLargeError(5120).message; // "larger than 5120 bytes"
 * ```
 */
export class BodyTooLargeError extends Error {
  readonly code = "body_too_large";
  constructor(readonly maxBytes: number) {
    super(`larger than ${maxBytes} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/**
 * Reads a whole body, at most `maxBytes` of it: past that the stream is cancelled and
 * {@link BodyTooLargeError} thrown. Other read errors (an abort, a reset) are rethrown as
 * they are, after the stream is cancelled.
 *
 * @example
 * ```ts
 * const bytes = await readCappedBody(response.body, 512 * 1024);
 * ```
 */
export async function readCappedBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  }
  return Buffer.concat(chunks);
}
