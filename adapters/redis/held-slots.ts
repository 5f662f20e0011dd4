import type { HeldSlot } from "../../src/store/types.js";

/** A slot this process holds in Redis, as far as it knows. */
interface KnownSlot {
  pool: string;
  leaseDeadline: number;
  requestDeadline: number;
}

/** A held slot to hand to `lua/adopt.lua` again: its request time left and its lease. */
export interface AdoptableSlot {
  pool: string;
  slotId: string;
  requestLeftMs: number;
  leaseDeadline: number;
}

/** Every this many grants, slots whose lease ran out unnoticed (a missed reclaim event) go. */
const PRUNE_EVERY = 1_024;

/**
 * The slots this process holds in Redis, from their grant to their release, with the lease
 * deadline Redis last gave them. A Redis that restarted without persistence has forgotten
 * them while their callers still work; once it is back, each slot whose lease had not run
 * out is adopted again with that lease (`lua/adopt.lua` leaves one Redis still holds as it
 * is), so the limit counts it instead of admitting someone on top. A slot whose lease ran out
 * stays lost, exactly as Redis would have reclaimed it: its caller learns so at its next
 * renewal.
 *
 * @example
 * ```ts
 * const held = new HeldSlots();
 * held.add("llm", grant.slot);
 * for (const slot of held.adoptable(await engine.now())) {
 *   await engine.adopt(slot.pool, slot.slotId, slot.requestLeftMs, slot.leaseDeadline);
 * }
 * ```
 */
export class HeldSlots {
  private readonly slots = new Map<string, KnownSlot>();
  private addsSincePrune = 0;

  /** `acquiredAt` (Redis time), when known, lets the record drop what ran out before it. */
  add(
    pool: string,
    slot: Pick<HeldSlot, "slotId" | "leaseDeadline" | "requestDeadline"> & { acquiredAt?: number },
  ): void {
    const { slotId, leaseDeadline, requestDeadline, acquiredAt } = slot;
    this.slots.set(slotId, { pool, leaseDeadline, requestDeadline });
    if (++this.addsSincePrune >= PRUNE_EVERY && acquiredAt !== undefined) {
      this.addsSincePrune = 0;
      this.adoptable(acquiredAt);
    }
  }

  has(slotId: string): boolean {
    return this.slots.has(slotId);
  }

  renewed(slotId: string, leaseDeadline: number): void {
    const known = this.slots.get(slotId);
    if (known) known.leaseDeadline = leaseDeadline;
  }

  delete(slotId: string): void {
    this.slots.delete(slotId);
  }

  forgetPool(pool: string): void {
    for (const [slotId, known] of this.slots) {
      if (known.pool === pool) this.slots.delete(slotId);
    }
  }

  clear(): void {
    this.slots.clear();
  }

  /** Every slot recorded, as pool and slot id, without judging their leases. */
  list(): { pool: string; slotId: string }[] {
    return [...this.slots].map(([slotId, known]) => ({ pool: known.pool, slotId }));
  }

  /**
   * The slots whose lease still runs at `now` (Redis time), oldest grant first, of the pools
   * `inScope` accepts (one shard's, when only that shard is back). The others in scope are
   * forgotten: Redis reclaimed them, or would have (a reclaim event missed while the
   * subscription was down leaves them here otherwise).
   */
  adoptable(now: number, inScope: (pool: string) => boolean = () => true): AdoptableSlot[] {
    const adoptable: AdoptableSlot[] = [];
    for (const [slotId, known] of this.slots) {
      if (!inScope(known.pool)) continue;
      if (known.leaseDeadline <= now) {
        this.slots.delete(slotId);
        continue;
      }
      const { pool, requestDeadline, leaseDeadline } = known;
      adoptable.push({ pool, slotId, requestLeftMs: requestDeadline - now, leaseDeadline });
    }
    return adoptable;
  }
}
