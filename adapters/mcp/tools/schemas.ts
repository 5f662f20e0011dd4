import * as v from "valibot";
import { PoolSchema } from "../../hono/control/resource-schemas.js";

/** A pool's subdomain, the name tools take it by (as in the Control API's paths). */
export const PoolArgument = v.pipe(
  v.string("pool must be a string"),
  v.minLength(1, "pool must not be empty"),
  v.maxLength(63, "pool is a subdomain label of at most 63 characters"),
  v.description("The pool's subdomain, as list_pools shows it."),
);

/**
 * A whole-number argument within bounds, with messages naming it.
 *
 * @example
 * ```ts
 * v.object({ limit: v.optional(wholeNumberArgument("limit", 1, 500, "Most entries to return.")) });
 * ```
 */
export function wholeNumberArgument(name: string, min: number, max: number, description: string) {
  return v.pipe(
    v.number(`${name} must be a number`),
    v.safeInteger(`${name} must be a whole number`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} may be at most ${max}`),
    v.description(description),
  );
}

/** A pool with its limits: the Control API's Pool plus queue, RPM and timeouts. */
export const PoolDetailSchema = v.object({
  ...PoolSchema.entries,
  origin: v.pipe(v.string(), v.description("Upstream base URL.")),
  queue_size: v.pipe(v.number(), v.description("Waiters allowed at once (0: fail fast).")),
  queue_timeout_ms: v.pipe(v.number(), v.description("Longest queue wait.")),
  rpm: v.pipe(v.nullable(v.number()), v.description("Requests-per-minute gate, or null.")),
  request_timeout_ms: v.pipe(v.number(), v.description("A slot's hard life cap.")),
  adaptive: v.pipe(v.boolean(), v.description("Learns a tighter limit from throttling.")),
});
export type PoolDetail = v.InferOutput<typeof PoolDetailSchema>;
