import { randomFillSync } from "node:crypto";

/** Ids made per refill of the text. */
const IDS_PER_REFILL = 256;
/**
 * Refills served by one `randomFillSync`: each call has a fixed cost that 4 KiB (one refill)
 * does not amortise; 32 KiB mostly does.
 */
const REFILLS_PER_ENTROPY = 8;
const UUID_LENGTH = 36;
/** The two hex digits of each byte value, as latin1 char codes: one table read per byte. */
const HEX_PAIRS = new Uint8Array(512);
for (let byte = 0; byte < 256; byte++) {
  const digits = byte.toString(16).padStart(2, "0");
  HEX_PAIRS[byte * 2] = digits.charCodeAt(0);
  HEX_PAIRS[byte * 2 + 1] = digits.charCodeAt(1);
}
/** Where the two hex digits of each of the 16 bytes go in `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`. */
const DIGITS_AT = new Uint8Array([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]);

const entropy = Buffer.allocUnsafeSlow(16 * IDS_PER_REFILL * REFILLS_PER_ENTROPY);
/** Where the next refill's random bytes start in `entropy` (its length: none left). */
let entropyAt = entropy.length;
const text = Buffer.allocUnsafeSlow(UUID_LENGTH * IDS_PER_REFILL);
// The dashes never move: written once, the refills only write the digits around them.
for (let id = 0; id < IDS_PER_REFILL; id++) {
  for (const at of [8, 13, 18, 23]) text[id * UUID_LENGTH + at] = 0x2d;
}
let nextId = IDS_PER_REFILL;
/** The text of the current batch of ids, decoded once. */
let batch = "";

/**
 * A new slot id: a random (version 4) UUID, as unguessable as `crypto.randomUUID()`.
 *
 * Why not `crypto.randomUUID()`: Node builds each UUID by concatenating 20 short pieces,
 * which leaves a tree of ~14 cons-strings (~450 bytes) per id that lives as long as the slot
 * or waiter does; with 200 000 callers queued, most of the time then goes to the GC. Here
 * the text of 256 ids is written into one buffer, decoded once into one string, and each id
 * is a slice of it (a small sliced string: no copy, no call into C++ per id).
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
  return batch.slice(start, start + UUID_LENGTH);
}

function refill(): void {
  // Locals, not module bindings, in the loop: no per-access binding checks.
  const bytesIn = entropy;
  const out = text;
  const hex = HEX_PAIRS;
  const digitsAt = DIGITS_AT;
  if (entropyAt === bytesIn.length) {
    randomFillSync(bytesIn);
    entropyAt = 0;
  }
  const base = entropyAt;
  // Each random byte is used once: this refill's share of the buffer is then spent.
  entropyAt += 16 * IDS_PER_REFILL;
  for (let id = 0; id < IDS_PER_REFILL; id++) {
    const first = base + id * 16;
    const start = id * UUID_LENGTH;
    // RFC 9562: version 4 in the high nibble of byte 6, variant 10xx in byte 8.
    bytesIn[first + 6] = (bytesIn[first + 6]! & 0x0f) | 0x40;
    bytesIn[first + 8] = (bytesIn[first + 8]! & 0x3f) | 0x80;
    for (let index = 0; index < 16; index++) {
      const pair = bytesIn[first + index]! * 2;
      const at = start + digitsAt[index]!;
      out[at] = hex[pair]!;
      out[at + 1] = hex[pair + 1]!;
    }
  }
  batch = out.toString("latin1");
  nextId = 0;
}
