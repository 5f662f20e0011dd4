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
