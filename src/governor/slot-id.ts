import { randomFillSync } from "node:crypto";

/** Ids made per refill of the buffers (one `randomFillSync` per 256 ids). */
const IDS_PER_REFILL = 256;
const UUID_LENGTH = 36;
const HEX = "0123456789abcdef";
/** Where the dashes of `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` go. */
const DASH_AT = new Set([8, 13, 18, 23]);

const entropy = Buffer.allocUnsafeSlow(16 * IDS_PER_REFILL);
const text = Buffer.allocUnsafeSlow(UUID_LENGTH * IDS_PER_REFILL);
let nextId = IDS_PER_REFILL;

/**
 * A new slot id: a random (version 4) UUID, as unguessable as `crypto.randomUUID()`.
 *
 * Why not `crypto.randomUUID()`: Node builds each UUID by concatenating 20 short pieces,
 * which leaves a tree of ~14 cons-strings (~450 bytes) per id that lives as long as the slot
 * or waiter does; with 200 000 callers queued, most of the time then goes to the GC. Here
 * the text of 256 ids is written into one buffer and each id is one flat string cut from it.
 *
 * @example
 * ```ts
 * const slotId = newSlotId(); // e.g. "3b241101-e2bb-4255-8caf-4136c566a962"
 * ```
 */
export function newSlotId(): string {
  if (nextId === IDS_PER_REFILL) refill();
  const start = nextId * UUID_LENGTH;
  nextId++;
  return text.toString("latin1", start, start + UUID_LENGTH);
}

function refill(): void {
  randomFillSync(entropy);
  for (let id = 0; id < IDS_PER_REFILL; id++) {
    const bytes = id * 16;
    // RFC 9562: version 4 in the high nibble of byte 6, variant 10xx in byte 8.
    entropy[bytes + 6] = (entropy[bytes + 6]! & 0x0f) | 0x40;
    entropy[bytes + 8] = (entropy[bytes + 8]! & 0x3f) | 0x80;
    let out = id * UUID_LENGTH;
    let nibble = 0;
    for (let char = 0; char < UUID_LENGTH; char++) {
      if (DASH_AT.has(char)) {
        text[out++] = 0x2d;
        continue;
      }
      const byte = entropy[bytes + (nibble >> 1)]!;
      const digit = nibble % 2 === 0 ? byte >> 4 : byte & 0x0f;
      text[out++] = HEX.charCodeAt(digit);
      nibble++;
    }
  }
  nextId = 0;
}
