/** Deepest nesting of arrays and objects a request body may have: real bodies nest 2 deep. */
export const MAX_JSON_DEPTH = 32;

const BYTE_ORDER_MARK = "\uFEFF";
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** Why a request body is not JSON we take; its message is fit for the caller. */
export class JsonBodyError extends Error {
  override readonly name = "JsonBodyError";
}

/**
 * Parses the text of a JSON request body, for every API that reads one. A leading UTF-8 byte
 * order mark is dropped (some Windows tools write one). Nesting deeper than
 * {@link MAX_JSON_DEPTH} is refused before parsing: such a value would make any recursive
 * walk over it (`JSON.stringify`, a validator) overflow the stack, a 500 instead of a 400.
 * Throws {@link JsonBodyError} for either problem or malformed JSON; blank text is `undefined`.
 *
 * @example
 * ```ts
 * parseJsonBody('\uFEFF{"waitMs":100}'); // { waitMs: 100 }
 * parseJsonBody("[".repeat(1000) + "]".repeat(1000)); // throws JsonBodyError
 * ```
 */
export function parseJsonBody(text: string): unknown {
  const json = text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
  if (json.trim() === "") return undefined;
  if (nestsTooDeep(json)) {
    throw new JsonBodyError(
      `The request body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`,
    );
  }
  try {
    return JSON.parse(json);
  } catch {
    throw new JsonBodyError("The request body is not valid JSON.");
  }
}

/** True when brackets outside strings nest past the limit: one pass, no recursion. */
function nestsTooDeep(json: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
