import * as v from "valibot";
import { InvalidArgumentError } from "../errors.js";
import { MAX_RPM } from "../util/limits.js";

export { MAX_RPM };
/** Longest duration setting (10 years): deadlines stay safe integers of epoch ms. */
export const MAX_SETTING_MS = 10 * 365.25 * 24 * 60 * 60 * 1000;

const positiveInt = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
const nonNegativeInt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const positiveMs = v.pipe(positiveInt, v.maxValue(MAX_SETTING_MS));
const nonNegativeMs = v.pipe(nonNegativeInt, v.maxValue(MAX_SETTING_MS));

/**
 * Defaults of every optional pool setting, documented once here and in docs/library.md.
 *
 * @example
 * ```ts
 * POOL_DEFAULTS.termMs; // 30000
 * ```
 */
export const POOL_DEFAULTS = {
  queue: { size: 0, timeoutMs: 30_000 },
  rpm: null,
  requestTimeoutMs: 300_000,
  termMs: 30_000,
  renewIntervalMs: 10_000,
  adaptive: true,
  budget: null,
} as const;

/**
 * Pool settings: one schema yields both the type and its validation. Unknown fields are
 * errors (a misspelt `queue.timeout` must not silently mean the default).
 *
 * - `maxConcurrent`: slots held at once (the hard ceiling; learning never goes above it).
 * - `queue.size`: waiters allowed at once (default 0: fail fast). `queue.timeoutMs`: the
 *   longest a waiter may wait; `waitMs` is clamped to it (default 30 000).
 * - `rpm`: requests-per-minute gate, exact over any rolling 60 s (default none; at most
 *   {@link MAX_RPM}).
 * - `requestTimeoutMs`: a slot's hard life cap, reported as `requestDeadline` (default 300 000).
 * - `termMs`: lease term; an unrenewed slot is reclaimed within it (default 30 000).
 * - `renewIntervalMs`: recommended renew period (default 10 000), at most half of `termMs`
 *   (a longer one is cut to it: renewing only as the lease runs out would lose the slot).
 * - `adaptive`: learn a tighter concurrency limit from throttling (default true).
 * - `budget`: membership in a budget with a reserved share (default none).
 *
 * @example
 * ```ts
 * const result = v.safeParse(PoolSettingsSchema, { maxConcurrent: 8, rpm: 500 });
 * ```
 */
export const PoolSettingsSchema = v.strictObject({
  maxConcurrent: positiveInt,
  queue: v.optional(
    v.strictObject({
      size: v.optional(nonNegativeInt, POOL_DEFAULTS.queue.size),
      timeoutMs: v.optional(nonNegativeMs, POOL_DEFAULTS.queue.timeoutMs),
    }),
    { ...POOL_DEFAULTS.queue },
  ),
  rpm: v.optional(v.nullable(v.pipe(positiveInt, v.maxValue(MAX_RPM))), POOL_DEFAULTS.rpm),
  requestTimeoutMs: v.optional(positiveMs, POOL_DEFAULTS.requestTimeoutMs),
  termMs: v.optional(positiveMs, POOL_DEFAULTS.termMs),
  renewIntervalMs: v.optional(positiveMs, POOL_DEFAULTS.renewIntervalMs),
  adaptive: v.optional(v.boolean(), POOL_DEFAULTS.adaptive),
  budget: v.optional(
    v.nullable(
      v.strictObject({
        id: v.pipe(v.string(), v.minLength(1)),
        reservedConcurrent: nonNegativeInt,
      }),
    ),
    POOL_DEFAULTS.budget,
  ),
});

/** What a caller passes to `definePool` (optional fields may be left out). */
export type PoolSettingsInput = v.InferInput<typeof PoolSettingsSchema>;
/** Pool settings with every default applied. */
export type PoolSettings = Readonly<v.InferOutput<typeof PoolSettingsSchema>>;

/**
 * Budget settings: a shared ceiling over member pools (null = none).
 *
 * @example
 * ```ts
 * await governor.defineBudget("openai", { originMaxConcurrent: 20 });
 * ```
 */
export const BudgetSettingsSchema = v.strictObject({
  originMaxConcurrent: v.nullable(nonNegativeInt),
});
/** A budget's settings as {@link BudgetSettingsSchema} validates them (`defineBudget`). */
export type BudgetSettings = Readonly<v.InferOutput<typeof BudgetSettingsSchema>>;

/** Validates with a schema and throws {@link InvalidArgumentError} listing every issue. */
export function parseOrThrow<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  what: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issues = result.issues.map((issue) => {
    const path = v.getDotPath(issue);
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  throw new InvalidArgumentError(`Invalid ${what}: ${issues.join("; ")}`, issues);
}

/**
 * Validates pool settings, applies the defaults and freezes the result; throws
 * {@link InvalidArgumentError} listing every problem.
 *
 * @example
 * ```ts
 * parsePoolSettings({ maxConcurrent: 8 }).termMs; // 30000
 * ```
 */
export function parsePoolSettings(input: unknown): PoolSettings {
  const settings = parseOrThrow(PoolSettingsSchema, input, "pool settings");
  if (settings.termMs > settings.requestTimeoutMs) settings.termMs = settings.requestTimeoutMs;
  const longestRenewInterval = Math.max(1, Math.floor(settings.termMs / 2));
  if (settings.renewIntervalMs > longestRenewInterval) {
    settings.renewIntervalMs = longestRenewInterval;
  }
  Object.freeze(settings.queue);
  if (settings.budget) Object.freeze(settings.budget);
  return Object.freeze(settings);
}
