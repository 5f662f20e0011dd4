import * as v from "valibot";
import { ABILITIES } from "../../../src/catalog/types.js";

/*
 * The Control API's response resources (contract section 2). They type the serializers and
 * generate the OpenAPI components, so the document cannot drift from what is sent.
 */

const id = v.pipe(v.number(), v.integer());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const dateTime = v.pipe(v.string(), v.isoTimestamp());

/** The token's user (contract: User). */
export const UserSchema = v.object({
  id,
  name: v.string(),
  email: v.pipe(v.string(), v.email()),
});
/** A user as the Control API shows it. */
export type UserResource = v.InferOutput<typeof UserSchema>;

/** The token's organization (contract: Team). */
export const TeamSchema = v.object({
  id,
  name: v.string(),
  slug: v.string(),
});
/** A team as the Control API shows it. */
export type TeamResource = v.InferOutput<typeof TeamSchema>;

/** Body of `GET /api/v1/me`. */
export const MeResponseSchema = v.object({
  user: UserSchema,
  team: TeamSchema,
  abilities: v.array(v.picklist(ABILITIES)),
});
/** The body of `GET /api/v1/me`: the token's user, team and abilities. */
export type MeResponse = v.InferOutput<typeof MeResponseSchema>;

/** A capacity budget (contract: Budget). */
export const BudgetSchema = v.object({
  id,
  name: v.string(),
  pool_ids: v.pipe(v.array(id), v.description("Ids of the budget's member pools.")),
  origin_max_concurrent: v.pipe(
    v.nullable(count),
    v.description("Shared concurrency ceiling over the member pools; null when there is none."),
  ),
  unallocated: v.pipe(
    count,
    v.description(
      "origin_max_concurrent minus the member pools' reservations, never negative; 0 without a ceiling.",
    ),
  ),
});
/** A budget as the Control API shows it. */
export type BudgetResource = v.InferOutput<typeof BudgetSchema>;

/** A pool's budget membership (contract: PoolBudget). */
export const PoolBudgetSchema = v.object({
  id,
  name: v.string(),
  reserved_concurrent: count,
});
/** A pool's budget membership (name and reserved share) inside a pool resource. */
export type PoolBudgetResource = v.InferOutput<typeof PoolBudgetSchema>;

/**
 * A pool (contract: Pool).
 *
 * @example
 * ```ts
 * const { data } = v.parse(PoolResponseSchema, await response.json());
 * ```
 */
export const PoolSchema = v.object({
  id,
  name: v.string(),
  description: v.optional(v.nullable(v.string())),
  subdomain: v.pipe(
    v.string(),
    v.description("Label used in the pool's host name and in API paths."),
  ),
  backend: v.picklist(["http", "postgres"]),
  max_concurrent: count,
  require_key: v.boolean(),
  has_credential: v.boolean(),
  budget: v.optional(v.nullable(PoolBudgetSchema)),
});
/** A pool as the Control API shows it (never its credential, only `has_credential`). */
export type PoolResource = v.InferOutput<typeof PoolSchema>;

/**
 * A pool key (contract: PoolKey). `key` and `signing_secret` appear only in the creation response.
 *
 * @example
 * ```ts
 * const key: PoolKeyResource = serializePoolKey(pool, record);
 * ```
 */
export const PoolKeySchema = v.object({
  id,
  label: v.string(),
  last_four: v.string(),
  access: v.picklist(["read", "write"]),
  allowed_methods: v.pipe(v.array(v.string()), v.description("HTTP methods the key admits.")),
  read_paths: v.pipe(
    v.optional(v.record(v.string(), v.array(v.string()))),
    v.description(
      "Present when the pool scopes extra read methods to path prefixes: method → path prefixes.",
    ),
  ),
  expires_at: v.optional(v.nullable(dateTime)),
  revoked_at: v.optional(v.nullable(dateTime)),
  created_at: v.optional(v.nullable(dateTime)),
  key: v.pipe(
    v.optional(v.string()),
    v.description("The plaintext pool key; returned only once, at creation."),
  ),
  signing_secret: v.pipe(
    v.optional(v.string()),
    v.description("Returned only once, at creation, and only when origin signing is on."),
  ),
  request_signing_secret: v.pipe(
    v.optional(v.string()),
    v.description(
      "Returned only once, at creation, and only when the pool has the hmac caller policy: the caller signs its requests with it.",
    ),
  ),
});
/** A pool key as the Control API shows it (the plaintext key only once, at creation). */
export type PoolKeyResource = v.InferOutput<typeof PoolKeySchema>;

/** The effective range of a metrics summary (contract: MetricsRange). */
export const MetricsRangeSchema = v.object({
  from: v.pipe(
    v.nullable(dateTime),
    v.description("Start of the window counted: the requested from, rounded down to its minute."),
  ),
  to: v.pipe(
    v.nullable(dateTime),
    v.description(
      "End of the window counted: the requested to, rounded up to its minute, never past now.",
    ),
  ),
  retention_days: count,
  clamped: v.pipe(v.boolean(), v.description("True when a requested bound was cut to retention.")),
});

/** Body of `GET /api/v1/pools/{pool}/metrics` (contract: PoolMetricsSummary). */
export const PoolMetricsSummarySchema = v.object({
  pool_id: id,
  requests: count,
  admitted: count,
  admit_rate: v.pipe(v.number(), v.description("admitted / requests; 0 without requests.")),
  queued_count: count,
  queued_pct: v.pipe(v.number(), v.description("100 × queued / requests; 0 without requests.")),
  range: MetricsRangeSchema,
});

/** Every Control API error body (contract: Error). */
export const ErrorSchema = v.object({ message: v.string() });

/**
 * A 422 body: `errors` maps each invalid field (body or query parameter name) to its
 * messages, Laravel style. Problems with the body as a whole are listed under `body`.
 *
 * @example
 * ```ts
 * // { "message": "label: Must be at most 60 characters.", "errors": { "label": ["Must be at most 60 characters."] } }
 * ```
 */
export const ValidationErrorSchema = v.object({
  message: v.string(),
  errors: v.record(v.string(), v.array(v.string())),
});
/** A 422 body: `message` and the problems per field in `errors`. */
export type ValidationErrorBody = v.InferOutput<typeof ValidationErrorSchema>;

/** `{data: Budget}` */
export const BudgetResponseSchema = v.object({ data: BudgetSchema });
/** `{data: Budget[]}` */
export const BudgetListResponseSchema = v.object({ data: v.array(BudgetSchema) });
/** `{data: Pool}` */
export const PoolResponseSchema = v.object({ data: PoolSchema });
/** `{data: Pool[]}` */
export const PoolListResponseSchema = v.object({ data: v.array(PoolSchema) });
/** `{data: PoolKey}` */
export const PoolKeyResponseSchema = v.object({ data: PoolKeySchema });
/** `{data: PoolKey[]}`: metadata only (`key` and `signing_secret` never appear in a list). */
export const PoolKeyListResponseSchema = v.object({ data: v.array(PoolKeySchema) });
