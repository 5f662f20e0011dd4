import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { groupIssuesByField } from "../../../src/catalog/validation.js";
import { InvalidArgumentError, SluiceError, type SluiceErrorCode } from "../../../src/errors.js";
import { statusForError } from "../error-status.js";
import type { ServerErrorReport } from "./control-env.js";
import { BODY_FIELD } from "./request-input.js";

/** The only message a 500 carries: details stay in the server log. */
export const INTERNAL_ERROR_MESSAGE = "Internal server error.";

/**
 * Fixed messages for "not found": the catalog's messages name what was asked for, and a
 * Control API 404 should read the same whether the resource is missing or another team's.
 */
const NOT_FOUND_MESSAGES: Partial<Record<SluiceErrorCode, string>> = {
  pool_not_found: "Pool not found.",
  budget_not_found: "Budget not found.",
};

/**
 * The 422 body: `errors` maps each field to its messages; `message` is the first problem
 * and a count of the rest, Laravel style ("label: Must be … (and 1 more error)").
 *
 * @example
 * ```ts
 * validationErrorBody(["label: Too long.", "access: Unknown."]);
 * // { message: "label: Too long. (and 1 more error)", errors: { label: ["Too long."], access: ["Unknown."] } }
 * ```
 */
export function validationErrorBody(issues: readonly string[]): {
  message: string;
  errors: Record<string, string[]>;
} {
  const errors = groupIssuesByField(issues);
  const unnamed = errors[""];
  if (unnamed) {
    delete errors[""];
    errors[BODY_FIELD] = [...(errors[BODY_FIELD] ?? []), ...unnamed];
  }
  const first = issues[0] ?? "The given data was invalid.";
  const more = issues.length - 1;
  const suffix = more > 0 ? ` (and ${more} more error${more === 1 ? "" : "s"})` : "";
  return { message: first + suffix, errors };
}

/**
 * Default 5xx logger. Logs the error (with its stack) and where it happened; never request
 * headers or bodies.
 */
export function logToConsole(report: ServerErrorReport): void {
  console.error(`Control API error on ${report.method} ${report.path}:`, report.error);
}

/**
 * Turns anything thrown by a Control API route into the contract's error response:
 * `{message}` with the status of {@link statusForError}, `{message, errors}` for 422, and a
 * bare "Internal server error." for bugs, which are logged.
 *
 * @example
 * ```ts
 * app.onError((error, c) => controlErrorResponse(error, c, logToConsole));
 * ```
 */
export function controlErrorResponse(
  error: unknown,
  c: Context,
  logError: (report: ServerErrorReport) => void,
): Response {
  if (error instanceof HTTPException && error.status < 500) {
    return c.json({ message: error.message || "Bad request." }, error.status);
  }
  const status: ContentfulStatusCode = error instanceof HTTPException ? 500 : statusForError(error);
  if (status >= 500)
    logError({ method: c.req.method, path: c.req.path, error, request: c.req.raw });
  if (status === 500) return c.json({ message: INTERNAL_ERROR_MESSAGE }, 500);
  if (error instanceof InvalidArgumentError && status === 422) {
    return c.json(validationErrorBody(error.issues), 422);
  }
  if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="api"');
  // The rest of an oversized body is never read, so this connection cannot carry another request.
  if (status === 413) c.header("Connection", "close");
  const message =
    error instanceof SluiceError
      ? (NOT_FOUND_MESSAGES[error.code] ?? error.message)
      : (error as Error).message;
  return c.json({ message }, status);
}
