import type { Context } from "hono";
import { groupIssuesByField } from "../../src/catalog/validation.js";
import { InvalidArgumentError } from "../../src/errors.js";

/** A posted form: text fields by name (repeated names as lists). */
export type FormBody = Record<string, string | string[]>;

/**
 * The posted form's text fields (files are ignored: no dashboard form uploads).
 *
 * @example
 * ```ts
 * const form = await readForm(c); formText(form, "name");
 * ```
 */
export async function readForm(c: Context): Promise<FormBody> {
  let parsed: Awaited<ReturnType<typeof c.req.parseBody>>;
  try {
    parsed = await c.req.parseBody({ all: true });
  } catch {
    // A multipart body without its boundary, or broken framing: the sender's fault, a 400
    // (it was a 500 and an error in the server log). No "field: " prefix: the message
    // belongs to the whole form, and a form page shows it above its fields.
    throw new InvalidArgumentError(
      "The form could not be read. Send it as the dashboard's own page does (application/x-www-form-urlencoded).",
    );
  }
  const form: FormBody = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === "string") form[name] = value;
    else if (Array.isArray(value)) {
      form[name] = value.filter((item): item is string => typeof item === "string");
    }
  }
  return form;
}

/** One text field ("" when absent; the first of repeated ones). */
export function formText(form: FormBody, name: string): string {
  const value = form[name];
  if (Array.isArray(value)) return value[0] ?? "";
  return value ?? "";
}

/** Every value of a repeated field (checkboxes). */
export function formList(form: FormBody, name: string): string[] {
  const value = form[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Field errors of a validation failure, by field name ("" for the form as a whole). */
export type FieldErrorMap = Record<string, string[]>;

/**
 * Runs a write and answers its field errors instead of throwing when the input was invalid
 * (any other error is thrown on, for the error page).
 *
 * @example
 * ```ts
 * const errors = await fieldErrorsOf(() => catalog.createApiToken(input));
 * if (errors) return c.html(<TokenPage errors={errors} />, 422);
 * ```
 */
export async function fieldErrorsOf(write: () => unknown): Promise<FieldErrorMap | null> {
  try {
    await write();
    return null;
  } catch (error) {
    if (error instanceof InvalidArgumentError) return groupIssuesByField(error.issues);
    throw error;
  }
}

/** Adds a message to a field's errors. */
export function addFieldError(errors: FieldErrorMap, field: string, message: string): void {
  const list = Object.hasOwn(errors, field) ? errors[field] : undefined;
  if (!list)
    Object.defineProperty(errors, field, {
      value: [message],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else if (!list.includes(message)) list.push(message);
}

/**
 * The error of a new password typed twice differently (fields `password`, `repeat`), or null.
 *
 * @example
 * ```ts
 * const errors = passwordsDiffer(form) ?? (await fieldErrorsOf(() => auth.setPassword(id, pw)));
 * ```
 */
export function passwordsDiffer(form: FormBody): FieldErrorMap | null {
  return formText(form, "password") === formText(form, "repeat")
    ? null
    : { repeat: ["The two passwords differ."] };
}

const WHOLE = /^\s*-?\d+\s*$/;

/**
 * A whole-number field of a form's values: blank is "not given" (`blank`: the schema's
 * default applies), anything but a whole number an error on the field.
 *
 * @example
 * ```ts
 * const size = numberField(values, "queue.size", errors); // undefined when blank
 * ```
 */
export function numberField(
  values: Record<string, string>,
  name: string,
  errors: FieldErrorMap,
  blank: undefined | null = undefined,
): number | undefined | null {
  const text = values[name] ?? "";
  if (text.trim() === "") return blank;
  if (!WHOLE.test(text)) {
    addFieldError(errors, name, "Must be a whole number.");
    return undefined;
  }
  return Number(text);
}
