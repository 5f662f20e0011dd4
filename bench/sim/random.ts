/**
 * A seeded pseudo-random source (mulberry32): the same seed replays the same simulation, so
 * strategies face identical luck and a failing smoke test can be re-run exactly.
 *
 * @example
 * ```ts
 * const random = seededRandom(42);
 * const serviceMs = 150 + 100 * random(); // uniform in [150, 250)
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}
