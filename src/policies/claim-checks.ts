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

// One e-mail address (no spaces, commas or angle brackets), and an `@domain` allow entry.
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9-]+(\.[a-z0-9-]+)*$/i;
const AT_DOMAIN = /^@[a-z0-9-]+(\.[a-z0-9-]+)*$/i;

/**
 * Why an entry of a trusted-header policy's `allow` list is neither an e-mail address nor an
 * `@domain`, or null.
 *
 * @example
 * ```ts
 * allowEntryIssue("@acme.test"); // null
 * allowEntryIssue("<script>"); // "Must be an e-mail address (ada@acme.test) or an @domain (@acme.test)."
 * ```
 */
export function allowEntryIssue(entry: string): string | null {
  return EMAIL.test(entry) || AT_DOMAIN.test(entry)
    ? null
    : "Must be an e-mail address (ada@acme.test) or an @domain (@acme.test).";
}

/**
 * Whether a trusted proxy's identity header names exactly one identity: one e-mail address,
 * not a list (`a@evil.test,b@acme.test`, or the header sent twice, which reads joined by
 * ", "), which a suffix match on the whole value would let through.
 *
 * @example
 * ```ts
 * isSingleIdentity("ada@acme.test"); // true
 * isSingleIdentity("eve@evil.test, ada@acme.test"); // false
 * ```
 */
export function isSingleIdentity(value: string): boolean {
  return EMAIL.test(value);
}

/**
 * Whether an identity (an e-mail address a trusted proxy vouches for) is allowed by a list of
 * exact addresses and `@domain` entries; an empty or absent list allows any identity.
 *
 * @example
 * ```ts
 * identityAllowed("ada@acme.test", ["@acme.test"]); // true
 * identityAllowed("eve@evil.test", ["ada@acme.test"]); // false
 * ```
 */
export function identityAllowed(identity: string, allow: readonly string[] | undefined): boolean {
  if (!allow || allow.length === 0) return true;
  const lower = identity.toLowerCase();
  return allow.some((entry) => {
    const rule = entry.toLowerCase();
    return rule.startsWith("@") ? lower.endsWith(rule) : lower === rule;
  });
}
