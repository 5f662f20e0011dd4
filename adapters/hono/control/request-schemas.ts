import * as v from "valibot";
import { hasControlCharacter, PLAIN_TEXT_MESSAGE } from "../../../src/catalog/plain-text.js";
import { KEY_LABEL_MAX } from "../../../src/catalog/pool-keys.js";
import { KEY_EXPIRY_PRESETS } from "../../../src/catalog/types.js";
import { characterCount, parseIsoDateTime } from "../../../src/catalog/validation.js";

/*
 * Request bodies and queries of the Control API, one schema each. Messages name no field:
 * the 422 body already keys them by field. `null` counts as omitted, as in the catalog.
 */

const ISO_DATE_TIME_MESSAGE = "Must be an ISO-8601 date-time with a time zone.";

function isIsoDateTime(text: string): boolean {
  return parseIsoDateTime(text) !== null;
}

/** A date-time string; JSON Schema gets `format: date-time` from the metadata. */
function isoDateTimeString() {
  return v.pipe(
    v.string(ISO_DATE_TIME_MESSAGE),
    v.check(isIsoDateTime, ISO_DATE_TIME_MESSAGE),
    v.metadata({ format: "date-time" }),
  );
}

/**
 * Body of `POST /api/v1/pools/{pool}/keys` (contract: PoolKeyCreateRequest). The whole body is
 * optional; a field not listed is a 422 on that field. Whether `expires_at` lies in the future
 * is checked by the catalog against its clock, and reported the same way.
 *
 * @example
 * ```ts
 * v.parse(PoolKeyCreateRequestSchema, { label: "ci", access: "read", expires_preset: "7d" });
 * ```
 */
export const PoolKeyCreateRequestSchema = v.strictObject(
  {
    label: v.pipe(
      v.nullish(
        v.pipe(
          v.string("Must be a string."),
          // Counted in code points after trimming, like the catalog: 60 emoji are 60 characters.
          v.check(
            (label) => characterCount(label.trim()) <= KEY_LABEL_MAX,
            `Must be at most ${KEY_LABEL_MAX} characters.`,
          ),
          v.check((label) => !hasControlCharacter(label), PLAIN_TEXT_MESSAGE),
          v.metadata({ maxLength: KEY_LABEL_MAX }),
        ),
      ),
      v.description(`A name for the key, at most ${KEY_LABEL_MAX} characters.`),
    ),
    expires_preset: v.pipe(
      v.nullish(v.picklist(KEY_EXPIRY_PRESETS, `Must be one of ${KEY_EXPIRY_PRESETS.join(", ")}.`)),
      v.description("Expiry relative to now; omit (or none) for no expiry."),
    ),
    access: v.pipe(
      v.nullish(v.picklist(["read", "write"], "Must be one of read, write.")),
      v.description(
        "read admits GET, HEAD, OPTIONS and the pool's read methods; omit for full write access.",
      ),
    ),
    expires_at: v.pipe(
      v.nullish(isoDateTimeString()),
      v.description("An absolute expiry in the future; may be sent instead of expires_preset."),
    ),
  },
  // An unknown field is refused rather than ignored: `{"key": "…"}` must not look accepted.
  (issue) => (issue.expected === "never" ? "Unknown field." : "Must be a JSON object."),
);
/** The body of `POST /api/v1/pools/{pool}/keys`, as validated. */
export type PoolKeyCreateRequest = v.InferOutput<typeof PoolKeyCreateRequestSchema>;

// An unencoded "+02:00" offset in a URL query arrives as " 02:00" ("+" means a space in
// query strings); a space can never stand there, so it is read back as the "+" it was.
const QUERY_OFFSET_AS_SPACE = / (\d{2}:?\d{2})$/;

/** A date-time query parameter, as a Date. */
function queryDateTime() {
  return v.pipe(
    v.string(ISO_DATE_TIME_MESSAGE),
    v.metadata({ format: "date-time" }),
    v.transform((text: string) => text.replace(QUERY_OFFSET_AS_SPACE, "+$1")),
    v.check(isIsoDateTime, ISO_DATE_TIME_MESSAGE),
    v.transform(toDate),
  );
}

/**
 * Query of `GET /api/v1/pools/{pool}/metrics`. Both bounds are optional; `from` may not be
 * later than `to`. Output bounds are Dates.
 *
 * @example
 * ```ts
 * v.parse(PoolMetricsQuerySchema, { from: "2030-01-01T00:00:00Z" }); // { from: Date }
 * ```
 */
export const PoolMetricsQuerySchema = v.pipe(
  v.object({
    from: v.pipe(
      v.optional(queryDateTime()),
      v.description("Start of the range; default: the start of the pool's metrics retention."),
    ),
    to: v.pipe(
      v.optional(queryDateTime()),
      v.description("End of the range (exclusive); default: now."),
    ),
  }),
  v.forward(
    v.partialCheck(
      [["from"], ["to"]],
      ({ from, to }) => from === undefined || to === undefined || from <= to,
      "Must not be later than to.",
    ),
    ["from"],
  ),
);
/** The query of `GET /api/v1/pools/{pool}/metrics` (`from`, `to`), as validated. */
export type PoolMetricsQuery = v.InferOutput<typeof PoolMetricsQuerySchema>;

function toDate(text: string): Date {
  return new Date(parseIsoDateTime(text) ?? Number.NaN);
}

/**
 * A numeric path id (budget, key). Anything else is "not found", never a validation error:
 * `/budgets/abc` names no budget.
 *
 * @example
 * ```ts
 * v.safeParse(PathIdSchema, "12").output; // 12
 * ```
 */
export const PathIdSchema = v.pipe(
  v.string(),
  v.regex(/^[1-9][0-9]{0,15}$/),
  v.transform(Number),
  v.number(),
  v.safeInteger(),
);
