import type { HeldSlot } from "../../src/store/types.js";

/** A slot this process holds in Redis, as far as it knows. */
interface KnownSlot {
  pool: string;
  leaseDeadline: number;
  requestDeadline: number;
}

/** A held slot to hand to `lua/adopt.lua` again, with what is left of its request time. */
export interface AdoptableSlot {
  pool: string;
  slotId: string;
  requestLeftMs: number;
}

/**
 * The slots this process holds in Redis, from their grant to their release, with the lease
 * deadline Redis last gave them. A Redis that restarted without persistence has forgotten
 * them while their callers still work; once it is back, each slot whose lease had not run
 * out is adopted again (`lua/adopt.lua` leaves one Redis still holds as it is), so the
 * limit counts it instead of admitting someone on top. A slot whose lease ran out stays
 * lost, exactly as Redis would have reclaimed it: its caller learns so at its next renewal.
 *
 * @example
 * ```ts
 * const held = new HeldSlots();
 * held.add("llm", grant.slot);
 * for (const slot of held.adoptable(await engine.now())) await engine.adopt(slot.pool, slot.slotId, slot.requestLeftMs);
 * ```
 */
export class HeldSlots {
  private readonly slots = new Map<string, KnownSlot>();

  add(pool: string, slot: Pick<HeldSlot, "slotId" | "leaseDeadline" | "requestDeadline">): void {
    const { slotId, leaseDeadline, requestDeadline } = slot;
    this.slots.set(slotId, { pool, leaseDeadline, requestDeadline });
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

  /**
   * The slots whose lease still runs at `now` (Redis time), oldest grant first. The others
   * are forgotten: Redis reclaimed them, or would have (a reclaim event missed while the
   * subscription was down leaves them here otherwise).
   */
  adoptable(now: number): AdoptableSlot[] {
    const adoptable: AdoptableSlot[] = [];
    for (const [slotId, known] of this.slots) {
      if (known.leaseDeadline <= now) {
        this.slots.delete(slotId);
        continue;
      }
      adoptable.push({ pool: known.pool, slotId, requestLeftMs: known.requestDeadline - now });
    }
    return adoptable;
  }
}
