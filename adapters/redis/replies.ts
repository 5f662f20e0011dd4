import type {
  HeldSlot,
  LearnedLimits,
  PoolFigures,
  PoolSnapshot,
  StoreAcquireResult,
  StoreCancelResult,
  StoreListener,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";

/**
 * Slots, figures and learned limits travel as arrays: Lua tables have no field order, and
 * arrays are shorter on the wire. These readers fix the order in one place.
 */
export type SlotTuple = [
  slotId: string,
  acquiredAt: number,
  leaseDeadline: number,
  requestDeadline: number,
  heldAtGrant: number,
];
/** `[held, queued, limit]`. */
export type FiguresTuple = [held: number, queued: number, limit: number];
/** `[concurrency, rpm, pausedUntil]` (null: nothing learned). */
export type LearnedTuple = [concurrency: number | null, rpm: number | null, pausedUntil: number];

/** A handoff (`g`) or a reclaim (`r`) as the scripts report and publish them. */
export type StoreEvent =
  | readonly ["g", pool: string, slot: SlotTuple, queuedMs: number]
  | readonly ["r", pool: string, slotIds: readonly string[]];

/**
 * What every group script answers (JSON): its result, its `now`, when to serve again, and the
 * events of the calling process's own slots (other processes get theirs by Pub/Sub).
 */
export interface ScriptReply<R> {
  r: R;
  /** The script's now (server TIME or the injected clock), epoch ms. */
  n: number;
  /** Earliest instant the group needs serving again, epoch ms. */
  w?: number;
  e?: StoreEvent[];
}

/** What a script publishes to the process that owns the slots: its events, in order. */
export type EventMessage = StoreEvent[];

/** The pool is not in this group: removed, never defined, or moved to the group `moved`. */
export interface MissingReply {
  t: "missing";
  moved?: string;
}

/** A list from Lua: its JSON encoder writes an empty one as `{}`. */
type LuaList<T> = T[] | Record<string, never>;

/** The `r` of each script, as its `lua/*.lua` file builds it. */
export type AcquireReply =
  | { t: "granted"; slot: SlotTuple; figures: FiguresTuple }
  | { t: "queued"; figures: FiguresTuple }
  | {
      t: "rejected";
      reason: "concurrency" | "queue_full" | "rpm" | "paused" | "budget";
      retryAfterMs: number | null;
      figures: FiguresTuple;
    };

/** release.lua */
export type ReleaseReply = { t: "released"; released: boolean; slot?: SlotTuple };

/** renew.lua */
export type RenewReply =
  | { t: "renewed"; leaseDeadline: number }
  | { t: "capped"; requestDeadline: number }
  | { t: "not_found" };

/** cancel.lua */
export type CancelReply = { t: "cancelled" } | { t: "granted"; slot: SlotTuple } | { t: "unknown" };

/** snapshot.lua */
export interface SnapshotReply {
  t: "snapshot";
  figures: FiguresTuple;
  learned: LearnedTuple;
  slotIds: LuaList<string>;
  waiterIds: LuaList<string>;
}

/** Scripts that only change state (upsert-pool, set-learned, serve, ...). */
export type OkReply = { t: "ok"; created?: boolean };

/** retire-pool.lua: moved out, refused (busy), or not there (absent). */
export type RetireReply =
  | { t: "retired"; learned: LearnedTuple; log: LuaList<string> }
  | { t: "busy"; held: number; queued: number }
  | { t: "absent"; moved?: string };

/** Lua's JSON encoder writes an empty list as `{}`. */
export function asList<T>(value: LuaList<T>): T[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Reads a slot tuple.
 *
 * @example
 * ```ts
 * toSlot(["s1", 1000, 11000, 61000, 1]).leaseDeadline; // 11000
 * ```
 */
export function toSlot(tuple: SlotTuple): HeldSlot {
  return {
    slotId: tuple[0],
    acquiredAt: tuple[1],
    leaseDeadline: tuple[2],
    requestDeadline: tuple[3],
    heldAtGrant: tuple[4],
  };
}

/** Reads a figures tuple. */
export function toFigures(tuple: FiguresTuple): PoolFigures {
  return { held: tuple[0], queued: tuple[1], limit: tuple[2] };
}

/** Reads a learned-limits tuple. */
export function toLearned(tuple: LearnedTuple): LearnedLimits {
  return { concurrency: tuple[0], rpm: tuple[1], pausedUntil: tuple[2] };
}

/** The store's answers, built from the script replies. */
export function toAcquireResult(reply: AcquireReply): StoreAcquireResult {
  switch (reply.t) {
    case "granted":
      return { type: "granted", slot: toSlot(reply.slot), figures: toFigures(reply.figures) };
    case "queued":
      return { type: "queued", figures: toFigures(reply.figures) };
    default:
      return {
        type: "rejected",
        reason: reply.reason,
        retryAfterMs: reply.retryAfterMs,
        figures: toFigures(reply.figures),
      };
  }
}

/** Shared frozen answers (no allocation on the paths that give them). */
export const NOT_RELEASED: StoreReleaseResult = Object.freeze({ released: false });
export const NOT_FOUND: StoreRenewResult = Object.freeze({ type: "not_found" });
export const UNKNOWN: StoreCancelResult = Object.freeze({ type: "unknown" });
export const CANCELLED: StoreCancelResult = Object.freeze({ type: "cancelled" });

/** release.lua's reply as the store answers it. */
export function toReleaseResult(reply: ReleaseReply): StoreReleaseResult {
  return reply.released && reply.slot ? { released: true, slot: toSlot(reply.slot) } : NOT_RELEASED;
}

/** renew.lua's reply as the store answers it. */
export function toRenewResult(reply: RenewReply): StoreRenewResult {
  if (reply.t === "renewed") return { type: "renewed", leaseDeadline: reply.leaseDeadline };
  if (reply.t === "capped") return { type: "capped", requestDeadline: reply.requestDeadline };
  return NOT_FOUND;
}

/** cancel.lua's reply as the store answers it. */
export function toCancelResult(reply: CancelReply): StoreCancelResult {
  if (reply.t === "granted") return { type: "granted", slot: toSlot(reply.slot) };
  return reply.t === "cancelled" ? CANCELLED : UNKNOWN;
}

/** snapshot.lua's reply as the store answers it. */
export function toSnapshot(reply: SnapshotReply): PoolSnapshot {
  return {
    ...toFigures(reply.figures),
    learned: toLearned(reply.learned),
    slotIds: asList(reply.slotIds),
    waiterIds: asList(reply.waiterIds),
  };
}

/** Hands events to the listener in the order the script produced them. */
export function dispatchEvents(listener: StoreListener, events: readonly StoreEvent[]): void {
  for (const event of events) {
    if (event[0] === "g") listener.granted(event[1], toSlot(event[2]), event[3]);
    else listener.reclaimed(event[1], event[2]);
  }
}
