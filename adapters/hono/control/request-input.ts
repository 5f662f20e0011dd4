import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import { InvalidArgumentError } from "../../../src/errors.js";
import { JsonBodyError, parseJsonBody } from "../json-body.js";
import { requireJsonBody } from "../lock/cross-site.js";
import { type BodyLimits, readBodyLimited } from "../lock/request-body.js";

/** Key-creation bodies are a few hundred bytes; anything near this is not a real request. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024;

/** Where issues about the body as a whole (not one field) are reported in a 422 `errors` map. */
export const BODY_FIELD = "body";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The JSON object of an optional request body: an empty body or `null` is `{}`; a leading byte
 * order mark is dropped. Malformed JSON, nesting too deep (see {@link parseJsonBody}) or
 * invalid UTF-8 is a 400; a body not declared `application/json` a 415; valid JSON that is
 * not an object is a 422 on `body`; a body over the size limit a 413 and one that does not
 * arrive in time a 408 (see {@link readBodyLimited}).
 *
 * @example
 * ```ts
 * const input = await readOptionalJsonObject(c.req.raw, { maxBytes: DEFAULT_MAX_BODY_BYTES }, c.env);
 * ```
 */
export async function readOptionalJsonObject(
  request: Request,
  limits: BodyLimits,
  env?: unknown,
): Promise<Record<string, unknown>> {
  const bytes = await readBodyLimited(request, limits, env);
  requireJsonBody(request.headers, bytes, "Control API");
  let parsed: unknown;
  try {
    parsed = parseJsonBody(strictUtf8.decode(bytes));
  } catch (error) {
    const message =
      error instanceof JsonBodyError ? error.message : "The request body is not valid JSON.";
    throw new HTTPException(400, { message });
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new InvalidArgumentError("The request body must be a JSON object.", [
      `${BODY_FIELD}: Must be a JSON object.`,
    ]);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Validates input with a schema. Failures throw one {@link InvalidArgumentError} whose
 * issues are `"field: message"` (the field is the body or query name), which the error
 * handler turns into a 422 `{message, errors}`.
 *
 * @example
 * ```ts
 * const body = parseInput(PoolKeyCreateRequestSchema, await readOptionalJsonObject(c.req.raw, max));
 * ```
 */
export function parseInput<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issues = result.issues.map(
    (issue) => `${v.getDotPath(issue) ?? BODY_FIELD}: ${issue.message}`,
  );
  throw new InvalidArgumentError(`The given data was invalid: ${issues.join("; ")}`, issues);
}

/**
 * The query parameters named by `names` (first value each, as Hono's `c.req.query()` gives
 * them), empty values left out: `?from=` means "no bound", as a form would send it.
 *
 * @example
 * ```ts
 * queryInput({ from: "", to: "2030-01-01T00:00:00Z", x: "1" }, ["from", "to"]); // { to: "2030-…" }
 * ```
 */
export function queryInput(
  query: Record<string, string>,
  names: readonly string[],
): Record<string, string> {
  const input: Record<string, string> = {};
  for (const name of names) {
    const value = query[name];
    if (value !== undefined && value !== "") input[name] = value;
  }
  return input;
}
