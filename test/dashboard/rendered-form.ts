const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
  "&#x27;": "'",
};
const decodeEntities = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (e) => ENTITIES[e]!);

function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  if (match) return decodeEntities(match[1]!);
  return new RegExp(`\\s${name}(\\s|/?>)`).test(tag) ? "" : null;
}

/**
 * The fields a browser without JavaScript posts for the form at `action` on a dashboard page,
 * as the page renders them (text inputs, checked boxes and radios, selected options,
 * textareas), with `changes` applied on top. For tests that save a form as a person would.
 *
 * @example
 * ```ts
 * const form = renderedForm(page.text, "/pool/open/edit", { maxConcurrent: "3" });
 * ```
 */
export function renderedForm(
  html: string,
  action: string,
  changes: Record<string, string | string[]> = {},
): Record<string, string | string[]> {
  const start = html.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action}`);
  const body = html.slice(start, html.indexOf("</form>", start));
  const fields: Record<string, string[]> = {};
  const add = (name: string | null, value: string) => {
    if (!name) return;
    const list = fields[name] ?? [];
    list.push(value);
    fields[name] = list;
  };
  for (const [tag] of body.matchAll(/<input\b[^>]*>/g)) {
    const type = attribute(tag, "type") ?? "text";
    if ((type === "checkbox" || type === "radio") && attribute(tag, "checked") === null) continue;
    add(attribute(tag, "name"), attribute(tag, "value") ?? (type === "checkbox" ? "on" : ""));
  }
  for (const [, open, text] of body.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    add(attribute(open!, "name"), decodeEntities(text!));
  }
  for (const [, open, options] of body.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const all = [...options!.matchAll(/<option\b[^>]*>/g)].map(([tag]) => tag);
    const chosen = all.find((tag) => attribute(tag, "selected") !== null) ?? all[0];
    if (chosen) add(attribute(open!, "name"), attribute(chosen, "value") ?? "");
  }
  const form: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(fields)) {
    form[name] = values.length === 1 ? values[0]! : values;
  }
  return { ...form, ...changes };
}
