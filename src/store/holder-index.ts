import type { HeldSlot } from "./types.js";

/** Characters of a slot id that make its hash: 7 hex digits (28 bits). */
const HASH_CHARS = 7;
/** Table size of an empty index (a power of two). */
const INITIAL_CAPACITY = 16;

/**
 * A pool's held slots by slot id, in grant order (the memory store's `holders`).
 *
 * Why not a `Map<string, HeldSlot>`: V8 hashes a string key the first time it sees it, in a
 * call out of the compiled code that costs more than the rest of the map's work, and every
 * slot id is fresh; a map also allocates as entries come and go. Here an open-addressing
 * table (linear probing, at most half full) hashes the last hex digits of the id (random in
 * a UUID; any id works, a poor hash only costs probes) and compares the ids themselves, so
 * lookups stay exact. Grant order is kept as a sequence number per entry, for the rare
 * readers of every holder (snapshots, lease expiry).
 *
 * @example
 * ```ts
 * const holders = new HolderIndex();
 * holders.set(slot.slotId, slot);
 * holders.get(slot.slotId); // slot
 * holders.delete(slot.slotId); // true
 * ```
 */
export class HolderIndex {
  private slots = emptySlots(INITIAL_CAPACITY);
  /** The hash of each entry's id, so moving entries never reads an id again. */
  private hashes = new Int32Array(INITIAL_CAPACITY);
  /** The grant sequence number of each entry. */
  private sequences = new Float64Array(INITIAL_CAPACITY);
  private mask = INITIAL_CAPACITY - 1;
  private count = 0;
  private nextSequence = 0;

  get size(): number {
    return this.count;
  }

  get(slotId: string): HeldSlot | undefined {
    const at = this.find(slotId);
    return at < 0 ? undefined : this.slots[at];
  }

  /** Adds a slot, or replaces the one of the same id in place (`slot.slotId` must be `slotId`). */
  set(slotId: string, slot: HeldSlot): void {
    const hash = hashOf(slotId);
    const { slots, hashes } = this;
    let at = hash & this.mask;
    for (let held = slots[at]; held !== undefined; held = slots[at]) {
      // Hashes first: comparing two distinct strings is far slower than two integers.
      if (hashes[at] === hash && held.slotId === slotId) {
        slots[at] = slot;
        return;
      }
      at = (at + 1) & this.mask;
    }
    slots[at] = slot;
    this.hashes[at] = hash;
    this.sequences[at] = this.nextSequence++;
    if (++this.count * 2 > slots.length) this.resize(slots.length * 2);
  }

  delete(slotId: string): boolean {
    return this.remove(slotId) !== undefined;
  }

  /** Deletes the slot of this id and answers it; undefined when none is held. */
  remove(slotId: string): HeldSlot | undefined {
    let hole = this.find(slotId);
    if (hole < 0) return undefined;
    const { slots, hashes, sequences, mask } = this;
    const removed = slots[hole];
    // Backward-shift deletion: entries after the hole that may move up into it do, so every
    // entry stays reachable from its home position without tombstones.
    for (let at = (hole + 1) & mask; slots[at] !== undefined; at = (at + 1) & mask) {
      const home = hashes[at]! & mask;
      // The entry may fill the hole unless its home lies cyclically in (hole, at].
      const stays = hole <= at ? hole < home && home <= at : hole < home || home <= at;
      if (stays) continue;
      slots[hole] = slots[at];
      hashes[hole] = hashes[at]!;
      sequences[hole] = sequences[at]!;
      hole = at;
    }
    slots[hole] = undefined;
    // Shrinks once far emptier than it grows (no resizing back and forth at one size).
    if (--this.count * 8 < slots.length && slots.length > INITIAL_CAPACITY) {
      this.resize(slots.length / 2);
    }
    return removed;
  }

  /** The held slots in grant order. */
  values(): HeldSlot[] {
    const entries: number[] = [];
    const slots = this.slots;
    for (let at = 0; at < slots.length; at++) if (slots[at] !== undefined) entries.push(at);
    const sequences = this.sequences;
    entries.sort((a, b) => sequences[a]! - sequences[b]!);
    return entries.map((at) => slots[at]!);
  }

  /** The held slot ids in grant order. */
  ids(): string[] {
    return this.values().map((slot) => slot.slotId);
  }

  /** The table position of `slotId`, or -1. */
  private find(slotId: string): number {
    const hash = hashOf(slotId);
    const { slots, hashes } = this;
    let at = hash & this.mask;
    for (let held = slots[at]; held !== undefined; held = slots[at]) {
      if (hashes[at] === hash && held.slotId === slotId) return at;
      at = (at + 1) & this.mask;
    }
    return -1;
  }

  private resize(capacity: number): void {
    const { slots, hashes, sequences } = this;
    this.slots = emptySlots(capacity);
    this.hashes = new Int32Array(capacity);
    this.sequences = new Float64Array(capacity);
    this.mask = capacity - 1;
    for (let from = 0; from < slots.length; from++) {
      const slot = slots[from];
      if (slot === undefined) continue;
      let at = hashes[from]! & this.mask;
      while (this.slots[at] !== undefined) at = (at + 1) & this.mask;
      this.slots[at] = slot;
      this.hashes[at] = hashes[from]!;
      this.sequences[at] = sequences[from]!;
    }
  }
}

/**
 * The hash of a slot id: its last {@link HASH_CHARS} characters read as hex digits, mixed so
 * that the low bits (the table position) depend on all of them.
 */
function hashOf(slotId: string): number {
  let hash = 0;
  for (let at = slotId.length - HASH_CHARS; at < slotId.length; at++) {
    // NaN before the start of a short id: `| 0` reads it as 0.
    const code = slotId.charCodeAt(at) | 0;
    // '0'–'9' → 0–9, 'a'–'f' and 'A'–'F' → 10–15.
    hash = (hash << 4) ^ ((code & 15) + 9 * (code >> 6));
  }
  // Multiply, then fold the high half down: the low bits (the table position) then depend
  // on every digit. The result stays a small integer (30 bits).
  hash = Math.imul(hash ^ slotId.length, 0x9e3779b1);
  return (hash ^ (hash >>> 16)) & 0x3fffffff;
}

/** A table of `capacity` empty entries (a packed array: no holes to check on reads). */
function emptySlots(capacity: number): (HeldSlot | undefined)[] {
  return Array.from({ length: capacity }, () => undefined);
}
