/**
 * A dot segment in any spelling: `.` or `..`, each dot plain or as `%2e`, optionally followed
 * by `;` path parameters (`..;x`, `.%2E;jsessionid=1`; `%3b` counts as `;`). Servlet
 * containers drop the parameters and then resolve the dots, and some servers decode `%2e`
 * before resolving: either way the segment climbs out of the path it appears in.
 */
const DOT_SEGMENT = /(?:^|\/)((?:\.|%2e){1,2}(?:(?:;|%3b)[^/]*)?)(?=\/|$)/i;
/** `%2f` and `%5c` (an origin that decodes them before routing sees a separator), and `\`. */
const ENCODED_SEPARATOR = /%2f|%5c|\\/i;
const SHOWN_LENGTH = 40;

/**
 * What makes a request path ambiguous, or null when it is not: a dot segment in any spelling
 * (`..`, `.`, `%2e%2e`, `.%2e`, `..;x`, …) or an encoded slash or backslash (`%2f`, `%5c`, or
 * a raw `\`). Such a path may reach a different resource on the origin than the one its text
 * names (servlet path parameters, decoding before dot-segment removal), so Sluice neither
 * checks a key's path scope against it nor forwards it: the proxy refuses it with 400, and
 * {@link keyAllowsMethod} never admits a scoped read method on it. Pass the path as received,
 * before any URL parser resolved its dot segments.
 *
 * @example
 * ```ts
 * ambiguousPathProblem("/v1/embeddings/..;/chat"); // 'the path has a dot segment ("..;")…'
 * ambiguousPathProblem("/v1/files/report%2Etxt"); // null
 * ```
 */
export function ambiguousPathProblem(path: string): string | null {
  const dots = DOT_SEGMENT.exec(path);
  if (dots) {
    return `the path has a dot segment (${shown(dots[1] as string)}), which an origin may resolve outside the path it names`;
  }
  const separator = ENCODED_SEPARATOR.exec(path);
  if (separator) {
    return `the path has an encoded slash or a backslash (${shown(separator[0])}), which an origin may read as a separator`;
  }
  return null;
}

/**
 * Whether {@link ambiguousPathProblem} finds anything in `path`.
 *
 * @example
 * ```ts
 * isAmbiguousPath("/base/..%2fsecret"); // true
 * ```
 */
export function isAmbiguousPath(path: string): boolean {
  return DOT_SEGMENT.test(path) || ENCODED_SEPARATOR.test(path);
}

function shown(text: string): string {
  return JSON.stringify(text.length > SHOWN_LENGTH ? `${text.slice(0, SHOWN_LENGTH)}…` : text);
}
