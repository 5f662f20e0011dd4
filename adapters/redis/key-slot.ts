/** The number of hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[byte] = crc & 0xffff;
  }
  return table;
})();

/**
 * The Cluster hash slot of a key, as Redis computes it (CRC16/XMODEM of the key, or of its
 * hash tag, the text between the first `{` and the next `}` when not empty, modulo 16384).
 * The store needs it to tell which master a group lives on without asking the cluster.
 *
 * @example
 * ```ts
 * keySlot("sluice:{p:llm}:pool:llm") === keySlot("{p:llm}"); // true: the same hash tag
 * ```
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, "utf8");
  let start = 0;
  let end = bytes.length;
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) ^ CRC16_TABLE[((crc >> 8) ^ bytes[i]!) & 0xff]!) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}

/**
 * A hash tag whose slot is one of `slots`: the store writes its probe of a shard there.
 * Tries `{probe:0}`, `{probe:1}`, … (a shard holding a third of the slots answers in a few).
 *
 * @example
 * ```ts
 * const tag = tagInSlots(new Set([0, 1, 2]));
 * ```
 */
export function tagInSlots(slots: ReadonlySet<number>): string {
  if (slots.size === 0) throw new Error("A shard without slots has no tag.");
  for (let n = 0; ; n++) {
    const tag = `{probe:${n}}`;
    if (slots.has(keySlot(tag))) return tag;
  }
}
