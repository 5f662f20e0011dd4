import type { Clock } from "../../src/clock/clock.js";
import { OAuthProtocolError } from "./oauth-error.js";
import type { OAuthStore } from "./types.js";

/** How many registrations one address may make, and how long unused clients are kept. */
export interface RegistrationLimits {
  /** Registrations an address may make per window. Default 10. */
  perAddress: number;
  /** The window, in ms. Default 10 minutes. */
  windowMs: number;
  /** Addresses counted at once (memory stays bounded); the oldest go first. Default 10,000. */
  maxAddresses: number;
  /** A client with no grant this long after registering is deleted. Default 24 hours. */
  unusedClientTtlMs: number;
}

/** The defaults of {@link RegistrationLimits}. */
export const REGISTRATION_LIMITS: RegistrationLimits = {
  perAddress: 10,
  windowMs: 10 * 60_000,
  maxAddresses: 10_000,
  unusedClientTtlMs: 24 * 60 * 60_000,
};

const PRUNE_INTERVAL_MS = 60_000;

/** Too many registrations from one address: 429 with `Retry-After`. */
export class RegistrationThrottledError extends OAuthProtocolError {
  constructor(readonly retryAfterMs: number) {
    super(
      "temporarily_unavailable",
      `Too many client registrations from this address: try again in ${Math.ceil(retryAfterMs / 1000)} seconds.`,
      429,
    );
  }
}

/**
 * What keeps open registration (RFC 7591 needs no sign-in) from filling the store: a fixed
 * window count per address, in a map of bounded size, and at most once a minute the
 * deletion of clients nobody granted anything within `unusedClientTtlMs`.
 *
 * @example
 * ```ts
 * const guard = new RegistrationGuard(store, clock);
 * await guard.admit(remoteAddressOf(c.env)); // throws RegistrationThrottledError past the limit
 * ```
 */
export class RegistrationGuard {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: OAuthStore,
    private readonly clock: Clock,
    private readonly limits: RegistrationLimits = REGISTRATION_LIMITS,
  ) {}

  /** Counts a registration from `address` (null: unknown, one shared count). */
  async admit(address: string | null): Promise<void> {
    const now = this.clock.now();
    this.count(address ?? "unknown", now);
    if (now - this.lastPrune >= PRUNE_INTERVAL_MS) {
      this.lastPrune = now;
      await this.store.pruneUnusedClients(now - this.limits.unusedClientTtlMs);
    }
  }

  private count(address: string, now: number): void {
    const { perAddress, windowMs, maxAddresses } = this.limits;
    const window = this.windows.get(address);
    if (window && now - window.startedAt < windowMs) {
      if (window.count >= perAddress) {
        throw new RegistrationThrottledError(window.startedAt + windowMs - now);
      }
      window.count++;
      return;
    }
    // A new window goes to the end of the map, so the oldest windows are at its front.
    this.windows.delete(address);
    for (const [oldest, { startedAt }] of this.windows) {
      if (this.windows.size < maxAddresses && now - startedAt < windowMs) break;
      this.windows.delete(oldest);
    }
    this.windows.set(address, { startedAt: now, count: 1 });
  }
}
