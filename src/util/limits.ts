/**
 * Largest RPM gate a pool may set or learn. The exact sliding window keeps one timestamp per
 * unit of the gate, so the bound keeps a pool's gate at a few MB at most; a rate above it (over
 * 16 000 requests per second) is not one a per-pool gate needs to enforce.
 *
 * @example
 * ```ts
 * if (rpm > MAX_RPM) throw new InvalidArgumentError("rpm too large");
 * ```
 */
export const MAX_RPM = 1_000_000;
