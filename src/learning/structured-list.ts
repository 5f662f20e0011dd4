/** One member of a structured-field list: `"default";q=100;w=60` → item `default`, params q, w. */
export interface ListMember {
  /** The bare item, unquoted. */
  item: string;
  /** Parameters by lower-case key, values unquoted; a key without a value is "?1". */
  params: Map<string, string>;
}

/**
 * A tolerant reader of RFC 8941 lists as the IETF RateLimit drafts use them: members split on
 * commas, parameters on semicolons, both outside double quotes. It does not validate item
 * types; the callers parse the numbers they need and ignore the rest.
 */
export function parseStructuredList(value: string): ListMember[] {
  const members: ListMember[] = [];
  for (const rawMember of splitOutsideQuotes(value, ",")) {
    const parts = splitOutsideQuotes(rawMember, ";");
    const item = unquote((parts[0] ?? "").trim());
    const params = new Map<string, string>();
    for (let index = 1; index < parts.length; index += 1) {
      const param = (parts[index] as string).trim();
      const equals = param.indexOf("=");
      const key = (equals === -1 ? param : param.slice(0, equals)).trim().toLowerCase();
      params.set(key, equals === -1 ? "?1" : unquote(param.slice(equals + 1).trim()));
    }
    if (item.length > 0 || params.size > 0) members.push({ item, params });
  }
  return members;
}

function splitOutsideQuotes(value: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < value.length; index += 1) {
    const char = value[index];
    if (char === "\\" && quoted) index += 1;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(value.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}

function unquote(text: string): string {
  if (text.length < 2 || text[0] !== '"' || text[text.length - 1] !== '"') return text;
  return text.slice(1, -1).replace(/\\(.)/g, "$1");
}
