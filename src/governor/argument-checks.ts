import { InvalidArgumentError } from "../errors.js";
import type { GovernorOptions } from "./types.js";

const GOVERNOR_OPTION_KEYS = new Set(["store", "clock", "metrics"]);
const STORE_METHODS = ["setListener", "upsertPool", "acquire", "release", "renew", "cancel"];
const CLOCK_METHODS = ["now", "setTimeout", "clearTimeout"];
const ACQUIRE_OPTION_KEYS = new Set(["waitMs", "noQueue", "signal"]);

/**
 * Checks what plain JavaScript may pass to `createGovernor`: a misspelt `store` would
 * otherwise fall back, silently, to a per-process memory store. Throws
 * {@link InvalidArgumentError}.
 *
 * @example
 * ```ts
 * checkGovernorOptions({ stroe: redisStore }); // throws: unknown option "stroe"
 * ```
 */
export function checkGovernorOptions(options: unknown): GovernorOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object") {
    throw new InvalidArgumentError(
      `createGovernor() takes an options object ({ store, clock, metrics }), got ${typeof options}.`,
    );
  }
  unknownKey(options, GOVERNOR_OPTION_KEYS, "createGovernor() option");
  const { store, clock } = options as GovernorOptions;
  if (store !== undefined) needsMethods(store, STORE_METHODS, "store", "a SlotStore");
  if (clock !== undefined) needsMethods(clock, CLOCK_METHODS, "clock", "a Clock");
  return options as GovernorOptions;
}

/**
 * Checks the shape of an acquire's options (their values are checked where they are used):
 * an object of known keys, so a misspelt `waitMs` does not quietly mean fail-fast.
 *
 * @example
 * ```ts
 * checkAcquireOptions({ wait: 100 }); // throws: unknown acquire option "wait"
 * ```
 */
export function checkAcquireOptions(options: object): void {
  if (typeof options !== "object") {
    throw new InvalidArgumentError(
      `Acquire options must be an object ({ waitMs, noQueue, signal }), got ${typeof options}.`,
    );
  }
  unknownKey(options, ACQUIRE_OPTION_KEYS, "acquire option");
  const { noQueue } = options as { noQueue?: unknown };
  if (noQueue !== undefined && typeof noQueue !== "boolean") {
    throw new InvalidArgumentError(`noQueue must be true or false, got ${typeof noQueue}.`);
  }
}

/**
 * A slot id as `release` and `renew` take it: the string of a grant.
 *
 * @example
 * ```ts
 * checkSlotId(grant.slotId);
 * ```
 */
export function checkSlotId(slotId: unknown): void {
  if (typeof slotId !== "string") {
    throw new InvalidArgumentError(
      `slotId must be the string a grant carries, got ${slotId === null ? "null" : typeof slotId}.`,
    );
  }
}

function unknownKey(options: object, known: ReadonlySet<string>, what: string): void {
  for (const key in options) {
    if (!known.has(key)) {
      throw new InvalidArgumentError(
        `Unknown ${what} "${key.slice(0, 40)}" (known: ${[...known].join(", ")}).`,
      );
    }
  }
}

function needsMethods(value: unknown, methods: readonly string[], name: string, kind: string) {
  const missing = methods.filter(
    (method) => typeof (value as Record<string, unknown> | null)?.[method] !== "function",
  );
  if (missing.length > 0) {
    throw new InvalidArgumentError(
      `${name} must be ${kind} (missing ${missing.join(", ")}), got ${value === null ? "null" : typeof value}.`,
    );
  }
}
