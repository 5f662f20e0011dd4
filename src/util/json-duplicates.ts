/** Where the string starting at `start` (an opening quote) ends: just past its closing quote. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

interface Frame {
  /** The keys seen so far of an object; null for an array. */
  keys: Set<string> | null;
  /** The object's current key, or the array's current index. */
  at: string | number;
  expectsKey: boolean;
}

/**
 * The dot paths of the keys an object of a JSON text gives more than once, in order
 * (`JSON.parse` silently keeps only the last, so a repeated setting would be lost unseen).
 * Expects text `JSON.parse` accepts; walks it without recursion, so any depth is fine.
 *
 * @example
 * ```ts
 * duplicateJsonKeys('{"jwt":{"requiredClaims":{"sub":["a"],"sub":["b"]}}}');
 * // ["jwt.requiredClaims.sub"]
 * ```
 */
export function duplicateJsonKeys(text: string): string[] {
  const found: string[] = [];
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    const top = stack.at(-1);
    if (char === '"') {
      const end = stringEnd(text, i);
      if (top?.keys && top.expectsKey) {
        const key = JSON.parse(text.slice(i, end)) as string;
        if (top.keys.has(key)) found.push([...stack.slice(0, -1).map((f) => f.at), key].join("."));
        top.keys.add(key);
        top.at = key;
        top.expectsKey = false;
      }
      i = end;
      continue;
    }
    if (char === "{") stack.push({ keys: new Set(), at: "", expectsKey: true });
    else if (char === "[") stack.push({ keys: null, at: 0, expectsKey: false });
    else if (char === "}" || char === "]") stack.pop();
    else if (char === "," && top) {
      if (top.keys) top.expectsKey = true;
      else top.at = (top.at as number) + 1;
    }
    i++;
  }
  return found;
}
