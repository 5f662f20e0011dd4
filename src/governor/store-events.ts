import type { HeldSlot, StoreListener } from "../store/types.js";
import type { Holds } from "./holds.js";
import type { WaitingRoom } from "./waiting-room.js";

/**
 * What the store tells the governor. A class, not an object of closures: the store's hot path
 * then calls methods that outlive every governor, so its optimised code survives one.
 *
 * @example
 * ```ts
 * store.setListener(new StoreEvents(room, holds, (pool) => removedElsewhere(pool)));
 * ```
 */
export class StoreEvents implements StoreListener {
  constructor(
    private readonly room: WaitingRoom,
    private readonly holds: Holds,
    private readonly removedElsewhere: (pool: string) => void,
  ) {}

  granted(_pool: string, slot: HeldSlot, queuedMs: number, waiter?: unknown): void {
    this.room.granted(slot, queuedMs, waiter);
  }

  reclaimed(_pool: string, slotIds: readonly string[]): void {
    this.holds.lost(slotIds);
  }

  removed(pool: string): void {
    this.removedElsewhere(pool);
  }
}
