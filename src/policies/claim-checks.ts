import { canonicalDomain, canonicalEmail } from "./email-address.js";

/** A claim value a requirement may list. */
export type ClaimValue = string | number | boolean;

/**
 * Why a verified token's claims miss a requirement (`{ sub: ["svc-a", "svc-b"] }`: the claim
 * must be one of the listed values; a list-valued claim such as `groups` must hold one of
 * them); null when every requirement is met. Never echoes the token's own values.
 *
 * @example
 * ```ts
 * claimIssue({ sub: "svc-a", groups: ["ops"] }, { sub: ["svc-a"], groups: ["ops", "dev"] }); // null
 * claimIssue({ sub: "svc-c" }, { sub: ["svc-a"] }); // "claim sub is not one of the allowed values"
 * ```
 */
export function claimIssue(
  claims: Readonly<Record<string, unknown>>,
  requirements: Readonly<Record<string, readonly ClaimValue[]>>,
): string | null {
  for (const [name, allowed] of Object.entries(requirements)) {
    const value = claims[name];
    if (value === undefined) return `claim ${name} is missing`;
    const values = Array.isArray(value) ? value : [value];
    if (!values.some((item) => allowed.includes(item as ClaimValue))) {
      return `claim ${name} is not one of the allowed values`;
    }
  }
  return null;
}

/** An allow entry as compared: `@` and a canonical domain, or a canonical address. */
function canonicalEntry(entry: string): string | null {
  if (!entry.startsWith("@")) return canonicalEmail(entry);
  const domain = canonicalDomain(entry.slice(1));
  return domain === null ? null : `@${domain}`;
}

/**
 * Why an entry of a trusted-header policy's `allow` list is neither an e-mail address nor an
 * `@domain` (internationalised ones too: `@bücher.example`, `jörg@bücher.example`), or null.
 *
 * @example
 * ```ts
 * allowEntryIssue("@acme.test"); // null
 * allowEntryIssue("@bücher.example"); // null
 * allowEntryIssue("<script>"); // "Must be an e-mail address (ada@acme.test) or an @domain (@acme.test)."
 * ```
 */
export function allowEntryIssue(entry: string): string | null {
  return canonicalEntry(entry) !== null
    ? null
    : "Must be an e-mail address (ada@acme.test) or an @domain (@acme.test).";
}

/**
 * Whether a trusted proxy's identity header (decoded as UTF-8) names exactly one identity:
 * one e-mail address (see {@link canonicalEmail}), not a list (`a@evil.test,b@acme.test`,
 * or the header sent twice, which reads joined by ", "), which a suffix match on the whole
 * value would let through, and no control characters.
 *
 * @example
 * ```ts
 * isSingleIdentity("ada@acme.test"); // true
 * isSingleIdentity("jörg@bücher.example"); // true
 * isSingleIdentity("eve@evil.test, ada@acme.test"); // false
 * ```
 */
export function isSingleIdentity(value: string): boolean {
  return canonicalEmail(value) !== null;
}

/**
 * Whether an identity (an e-mail address a trusted proxy vouches for) is allowed by a list of
 * exact addresses and `@domain` entries; an empty or absent list allows any identity.
 * Compared as {@link canonicalEmail} writes them: case aside, and a Unicode domain the same
 * as its `xn--` form.
 *
 * @example
 * ```ts
 * identityAllowed("ada@acme.test", ["@acme.test"]); // true
 * identityAllowed("jörg@bücher.example", ["@xn--bcher-kva.example"]); // true
 * identityAllowed("eve@evil.test", ["ada@acme.test"]); // false
 * ```
 */
export function identityAllowed(identity: string, allow: readonly string[] | undefined): boolean {
  if (!allow || allow.length === 0) return true;
  const address = canonicalEmail(identity);
  if (address === null) return false;
  return allow.some((entry) => {
    const rule = canonicalEntry(entry);
    // The address holds one "@": ending with "@domain" is being at exactly that domain.
    return rule !== null && (rule.startsWith("@") ? address.endsWith(rule) : address === rule);
  });
}
