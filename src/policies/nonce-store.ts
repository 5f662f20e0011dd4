import { LRUCache } from "lru-cache";
import { StoreUnavailableError } from "../errors.js";

/**
 * Where signed requests' nonces are remembered for their window, so a request sent twice is
 * caught: in memory for one server ({@link MemoryNonceStore}), in Redis for several
 * (`RedisNonceStore` in `sluice/redis`). One conformance suite runs against both.
 */
export interface NonceStore {
  /**
   * Records `nonce` for `ttlMs`; true when it was new, false when it is still remembered
   * (a replay). Throws `StoreUnavailableError` when it cannot tell (then nothing is admitted).
   */
  claim(nonce: string, ttlMs: number): Promise<boolean>;
}

/** Default most nonces one server remembers at once. */
export const DEFAULT_MAX_NONCES = 100_000;

/**
 * Nonces in this process's memory: each forgotten when its window ends (lazily), at most
 * `max` at once. When that many are still within their window, new signed requests are
 * refused (`StoreUnavailableError`, 503) rather than forgetting a live nonce, which would
 * let its request be replayed.
 *
 * @example
 * ```ts
 * const nonces = new MemoryNonceStore({ now: () => clock.now() });
 * await nonces.claim("7:n0nce-0123456789ab", 600_000); // true, then false until it expires
 * ```
 */
export class MemoryNonceStore implements NonceStore {
  private readonly seen: LRUCache<string, true>;
  private readonly max: number;

  constructor(options: { max?: number; now?: () => number } = {}) {
    this.max = options.max ?? DEFAULT_MAX_NONCES;
    const now = options.now ?? Date.now;
    // max + 1 so that a full store is noticed before lru-cache evicts a live nonce itself.
    this.seen = new LRUCache<string, true>({
      max: this.max + 1,
      ttl: 1,
      ttlResolution: 0,
      perf: { now },
    });
  }

  async claim(nonce: string, ttlMs: number): Promise<boolean> {
    if (this.seen.has(nonce)) return false;
    if (this.seen.size >= this.max) {
      this.seen.purgeStale();
      if (this.seen.size >= this.max) {
        throw new StoreUnavailableError(
          "Too many signed requests within the signature window to remember their nonces; retry shortly.",
        );
      }
    }
    this.seen.set(nonce, true, { ttl: Math.max(1, ttlMs) });
    return true;
  }
}
