import type {
  HeldSlot,
  LearnedLimits,
  LearnedProbe,
  PoolFigures,
  PoolSnapshot,
  SharedLearned,
  StoreAcquireResult,
  StoreCancelResult,
  StoreInspectResult,
  StoreListener,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";

/**
 * Scripts answer flat arrays (see the top of `lua/lib.lua`): no JSON to encode in Lua or to
 * parse here, and no nested arrays to build. A Lua number arrives as a number, a string as a
 * string, Lua `false` as null. These readers fix the field order in one place.
 */
export type ReplyField = string | number | null;
/** A script's whole answer. */
export type ReplyFields = readonly ReplyField[];

/** Where a script's result starts in its answer (after now, the wake-up and the events). */
export interface ScriptResult {
  readonly fields: ReplyFields;
  readonly at: number;
}

/** Header fields of every answer: its now, the next wake-up (null: none), event fields. */
export const REPLY_NOW = 0;
export const REPLY_WAKE = 1;
export const REPLY_EVENT_COUNT = 2;
export const REPLY_EVENTS = 3;

/** Learned limits `[concurrency, rpm, pausedUntil]` (null: nothing learned), as moves carry them. */
export type LearnedTuple = [concurrency: number | null, rpm: number | null, pausedUntil: number];

/** The result's type (its first field). */
export function resultType({ fields, at }: ScriptResult): ReplyField {
  return fields[at] ?? null;
}

/** The group a `missing` answer names as the pool's new home, or null. */
export function movedTo({ fields, at }: ScriptResult): string | null {
  const moved = fields[at + 1];
  return typeof moved === "string" && moved !== "" ? moved : null;
}

/** How many fields a slot takes in a reply (see `push_slot` in lib.lua). */
const SLOT_FIELDS = 6;

/**
 * Reads the fields of a slot: id, acquiredAt, leaseDeadline, requestDeadline, heldAtGrant,
 * budgetRoom (-1: none).
 *
 * @example
 * ```ts
 * readSlot(["s1", 1000, 11000, 61000, 1, -1], 0).leaseDeadline; // 11000
 * ```
 */
export function readSlot(fields: ReplyFields, at: number): HeldSlot {
  const budgetRoom = fields[at + 5] as number;
  return {
    slotId: String(fields[at]),
    acquiredAt: fields[at + 1] as number,
    leaseDeadline: fields[at + 2] as number,
    requestDeadline: fields[at + 3] as number,
    heldAtGrant: fields[at + 4] as number,
    budgetRoom: budgetRoom >= 0 ? budgetRoom : undefined,
  };
}

/** Reads `held, queued, limit`. */
function readFigures(fields: ReplyFields, at: number): PoolFigures {
  return {
    held: fields[at] as number,
    queued: fields[at + 1] as number,
    limit: fields[at + 2] as number,
  };
}

/** Reads `concurrency, rpm, pausedUntil` (null: nothing learned). */
export function readLearned(fields: ReplyFields, at: number): LearnedLimits {
  return {
    concurrency: fields[at] as number | null,
    rpm: fields[at + 1] as number | null,
    pausedUntil: fields[at + 2] as number,
  };
}

/**
 * Reads `level, failures, failedAt` into `learned.probe`; without a probe backoff the field
 * stays absent, as the memory store keeps it.
 */
function readProbe(learned: LearnedLimits, fields: ReplyFields, at: number): LearnedLimits {
  const level = fields[at];
  if (typeof level !== "number") return learned;
  const probe: LearnedProbe = {
    level,
    failures: fields[at + 1] as number,
    failedAt: fields[at + 2] as number,
  };
  learned.probe = probe;
  return learned;
}

/** Reads `version`, the learned limits and the probe backoff (see `push_shared` in lib.lua). */
function readShared(fields: ReplyFields, at: number): SharedLearned {
  const learned = readProbe(readLearned(fields, at + 1), fields, at + 4);
  return { version: fields[at] as number, learned };
}

/** Reads a count followed by that many strings; answers the list and the index after it. */
function readList(fields: ReplyFields, at: number): [list: string[], next: number] {
  const count = fields[at] as number;
  const list = new Array<string>(count);
  for (let i = 0; i < count; i++) list[i] = String(fields[at + 1 + i]);
  return [list, at + 1 + count];
}

/** acquire.lua's result. */
export function readAcquire({ fields, at }: ScriptResult): StoreAcquireResult {
  switch (fields[at]) {
    case "granted":
      return {
        type: "granted",
        slot: readSlot(fields, at + 1),
        figures: readFigures(fields, at + 1 + SLOT_FIELDS),
      };
    case "queued":
      return { type: "queued", figures: readFigures(fields, at + 1) };
    default:
      return {
        type: "rejected",
        reason: fields[at + 1] as "concurrency" | "queue_full" | "rpm" | "paused" | "budget",
        retryAfterMs: fields[at + 2] as number | null,
        figures: readFigures(fields, at + 3),
      };
  }
}

/** Shared frozen answers (no allocation on the paths that give them). */
export const NOT_RELEASED: StoreReleaseResult = Object.freeze({ released: false });
export const NOT_FOUND: StoreRenewResult = Object.freeze({ type: "not_found" });
export const UNKNOWN: StoreCancelResult = Object.freeze({ type: "unknown" });
export const CANCELLED: StoreCancelResult = Object.freeze({ type: "cancelled" });

/** release.lua's result. */
export function readRelease({ fields, at }: ScriptResult): StoreReleaseResult {
  if (fields[at + 1] !== 1) return NOT_RELEASED;
  const after = at + 2 + SLOT_FIELDS;
  return {
    released: true,
    slot: readSlot(fields, at + 2),
    held: fields[after] as number,
    queued: fields[after + 1] as number,
    shared: readShared(fields, after + 2),
  };
}

/** inspect.lua's result. */
export function readInspect({ fields, at }: ScriptResult): StoreInspectResult | null {
  if (fields[at + 1] !== 1) return null;
  const after = at + 2 + SLOT_FIELDS;
  return {
    slot: readSlot(fields, at + 2),
    held: fields[after] as number,
    queued: fields[after + 1] as number,
    shared: readShared(fields, after + 2),
  };
}

/** renew.lua's result. */
export function readRenew({ fields, at }: ScriptResult): StoreRenewResult {
  const type = fields[at];
  if (type === "renewed") return { type: "renewed", leaseDeadline: fields[at + 1] as number };
  if (type === "capped") return { type: "capped", requestDeadline: fields[at + 1] as number };
  return NOT_FOUND;
}

/** cancel.lua's result. */
export function readCancel({ fields, at }: ScriptResult): StoreCancelResult {
  const type = fields[at];
  if (type === "granted") return { type: "granted", slot: readSlot(fields, at + 1) };
  return type === "cancelled" ? CANCELLED : UNKNOWN;
}

/**
 * rejoin.lua's result: the slot a rejoining waiter was handed already (its handoff message was
 * lost) and its time in the queue, else null (still queued, queued again, or its wait is over).
 */
export function readRejoin({
  fields,
  at,
}: ScriptResult): { slot: HeldSlot; queuedMs: number } | null {
  if (fields[at] !== "held") return null;
  return { slot: readSlot(fields, at + 1), queuedMs: fields[at + 1 + SLOT_FIELDS] as number };
}

/** adopt.lua's result: the slot as Redis holds it now (adopted, or held already); null: expired. */
export function readAdopt({ fields, at }: ScriptResult): HeldSlot | null {
  return fields[at] === "expired" ? null : readSlot(fields, at + 1);
}

/** upsert-pool.lua's result: whether the pool was created. */
export function readCreated({ fields, at }: ScriptResult): boolean {
  return fields[at + 1] === 1;
}

/** snapshot.lua's result. */
export function readSnapshot({ fields, at }: ScriptResult): PoolSnapshot {
  const [slotIds, next] = readList(fields, at + 10);
  const [waiterIds] = readList(fields, next);
  return {
    ...readFigures(fields, at + 1),
    learned: readProbe(readLearned(fields, at + 4), fields, at + 7),
    slotIds,
    waiterIds,
  };
}

/** retire-pool.lua: moved out (with what it carries), refused (busy), or not there (absent). */
export type RetireResult =
  | { t: "retired"; learned: LearnedTuple; log: string[] }
  | { t: "busy"; held: number; queued: number }
  | { t: "absent"; moved: string | null };

/** retire-pool.lua's result. */
export function readRetire(result: ScriptResult): RetireResult {
  const { fields, at } = result;
  switch (fields[at]) {
    case "retired": {
      const learned = readLearned(fields, at + 1);
      const [log] = readList(fields, at + 4);
      return {
        t: "retired",
        learned: [learned.concurrency, learned.rpm, learned.pausedUntil],
        log,
      };
    }
    case "busy":
      return { t: "busy", held: fields[at + 1] as number, queued: fields[at + 2] as number };
    default:
      return { t: "absent", moved: movedTo(result) };
  }
}

/**
 * The store's listener, plus what only this process's record of its own slots needs to hear:
 * a slot it owns renewed or released through another process (a Lock API call sent to
 * another server).
 */
export interface RedisListener extends StoreListener {
  renewedElsewhere?(pool: string, slotId: string, leaseDeadline: number): void;
  releasedElsewhere?(pool: string, slotId: string): void;
}

/**
 * Hands events to the listener in the order the script produced them: `g, pool, slot (6
 * fields), queuedMs` for a handoff, `r, pool, count, slot ids` for a reclaim, `x, pool` for a
 * pool another process removed, `n, pool, slot id, leaseDeadline` and `d, pool, slot id` for
 * one of this process's slots renewed or released by another. `fields[from, to)` holds them
 * (a reply's event part, or a whole published message).
 */
export function dispatchEvents(
  listener: RedisListener,
  fields: ReplyFields,
  from = 0,
  to = fields.length,
): void {
  let i = from;
  while (i < to) {
    const pool = String(fields[i + 1]);
    if (fields[i] === "g") {
      listener.granted(pool, readSlot(fields, i + 2), fields[i + 2 + SLOT_FIELDS] as number);
      i += 3 + SLOT_FIELDS;
    } else if (fields[i] === "r") {
      const [ids, next] = readList(fields, i + 2);
      listener.reclaimed(pool, ids);
      i = next;
    } else if (fields[i] === "x") {
      listener.removed?.(pool);
      i += 2;
    } else if (fields[i] === "n") {
      listener.renewedElsewhere?.(pool, String(fields[i + 2]), fields[i + 3] as number);
      i += 4;
    } else if (fields[i] === "d") {
      listener.releasedElsewhere?.(pool, String(fields[i + 2]));
      i += 3;
    } else {
      return;
    }
  }
}
