import { InvalidArgumentError } from "../errors.js";
import type { HeldSlot, PoolFigures } from "../store/types.js";
import { checkAcquireOptions } from "./argument-checks.js";
import type { PoolEntry } from "./pool-registry.js";
import type { PoolSettings } from "./settings.js";
import type { AcquireOptions, SlotGrant } from "./types.js";

/**
 * A held slot as the caller sees it: the contract's lock grant plus live figures.
 *
 * @example
 * ```ts
 * const grant = toGrant(entry, result.slot, 0); // granted at once
 * ```
 */
export function toGrant(entry: PoolEntry, slot: HeldSlot, queuedMs: number): SlotGrant {
  return grantOf(entry.settings, entry.limit, slot, queuedMs);
}

/**
 * {@link toGrant} from the pool's settings and effective limit as they were at the grant
 * (for a grant made later, when first read).
 *
 * @example
 * ```ts
 * const grant = grantOf(entry.settings, entry.limit, slot, queuedMs);
 * ```
 */
export function grantOf(
  settings: PoolSettings,
  limit: number,
  slot: HeldSlot,
  queuedMs: number,
): SlotGrant {
  return {
    slotId: slot.slotId,
    leaseDeadline: slot.leaseDeadline,
    requestDeadline: slot.requestDeadline,
    termMs: settings.termMs,
    renewIntervalMs: settings.renewIntervalMs,
    remainingSlots: Math.max(0, Math.min(limit - slot.heldAtGrant, slot.budgetRoom ?? limit)),
    effectiveLimit: limit,
    queuedMs,
  };
}

/**
 * The queue wait to ask the store for: validated, clamped to the pool's queue timeout.
 * Throws an `InvalidArgumentError` for a negative or fractional `waitMs`, a `signal` that
 * is not an AbortSignal, or options of another shape (see `checkAcquireOptions`).
 *
 * @example
 * ```ts
 * waitBudget(settings, { waitMs: 60_000 }); // settings.queue.timeoutMs when that is shorter
 * ```
 */
export function waitBudget(settings: PoolSettings, options: AcquireOptions): number {
  checkAcquireOptions(options);
  const { waitMs, noQueue, signal } = options;
  if (signal != null && !isAbortSignal(signal)) {
    throw new InvalidArgumentError("signal must be an AbortSignal.");
  }
  if (waitMs !== undefined && (!Number.isSafeInteger(waitMs) || waitMs < 0)) {
    throw new InvalidArgumentError(
      // JSON shows a string as one ("10"), so a number sent as text is told apart.
      `waitMs must be a non-negative integer of milliseconds, got ${typeof waitMs === "number" ? waitMs : (JSON.stringify(waitMs) ?? String(waitMs))}.`,
    );
  }
  if (noQueue || !waitMs) return 0;
  return Math.min(waitMs, settings.queue.timeoutMs);
}

/** An AbortSignal, also one of another realm or a polyfill (what the governor reads of it). */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  const signal = value as AbortSignal;
  return typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function";
}

/**
 * Keeps the figures of the store's latest answer on the pool entry (learning reads them).
 *
 * @example
 * ```ts
 * noteFigures(entry, result.figures);
 * ```
 */
export function noteFigures(entry: PoolEntry, figures: PoolFigures): void {
  entry.held = figures.held;
  entry.queued = figures.queued;
  entry.limit = figures.limit;
}
