// RFC 5322 atext plus the letters, marks and digits of any script (RFC 6531's UTF-8 local
// parts). No spaces, controls, format characters (bidi overrides), commas, quotes or brackets:
// a list or a display name is not one address.
const LOCAL_PART = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~.-]+$/u;
// Labels of letters, marks, digits and hyphens, split by ASCII dots only; IDNA checks the rest.
const DOMAIN = /^[\p{L}\p{M}\p{N}-]+(?:\.[\p{L}\p{M}\p{N}-]+)*$/u;

/**
 * A domain as compared: its IDNA ASCII form in lower case (`bücher.example`,
 * `BÜCHER.example` and `xn--bcher-kva.example` are all `xn--bcher-kva.example`); null when
 * it is none. Each label must be written as IDNA writes it, Unicode or `xn--`, in any case:
 * a spelling IDNA would only map to one (full-width letters, `ａｃｍｅ.test`) is refused, so an
 * allow list matches the addresses it names and no look-alikes.
 *
 * @example
 * ```ts
 * canonicalDomain("Bücher.example"); // "xn--bcher-kva.example"
 * canonicalDomain("acme.test,evil.test"); // null
 * ```
 */
export function canonicalDomain(domain: string): string | null {
  const written = domain.normalize("NFC").toLowerCase();
  if (!DOMAIN.test(written)) return null;
  // IDNA maps compatibility spellings (full-width letters, ligatures) onto other names: a
  // domain is matched only as written, never through a look-alike.
  if (written.normalize("NFKC").toLowerCase() !== written) return null;
  let ascii: string;
  try {
    // The WHATWG URL parser applies IDNA (UTS 46) as browsers do; no node:url in the core.
    ascii = new URL(`http://${written}/`).hostname;
  } catch {
    return null;
  }
  // A host the parser read as something else (a numeric IPv4 spelling) is no domain.
  return ascii.split(".").length === written.split(".").length ? ascii : null;
}

/**
 * One e-mail address as compared, `local@domain`: the local part (UTF-8 allowed) in NFC and
 * lower case, the domain as {@link canonicalDomain}; null when `text` is not exactly one
 * address (a list, a display name, control characters, two `@`).
 *
 * @example
 * ```ts
 * canonicalEmail("Ada@Bücher.example"); // "ada@xn--bcher-kva.example"
 * canonicalEmail("eve@evil.test, ada@acme.test"); // null
 * ```
 */
export function canonicalEmail(text: string): string | null {
  const at = text.indexOf("@");
  if (at <= 0) return null;
  const local = text.slice(0, at).normalize("NFC").toLowerCase();
  if (!LOCAL_PART.test(local)) return null;
  const domain = canonicalDomain(text.slice(at + 1));
  return domain === null ? null : `${local}@${domain}`;
}
