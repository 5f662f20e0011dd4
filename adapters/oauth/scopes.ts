import type { Ability, Role } from "../../src/catalog/types.js";

/**
 * Scopes an assistant may ask for: the Control API abilities an MCP tool needs (contract
 * section 5). `pools:write` is left out: no tool writes pools.
 */
export const OAUTH_SCOPES = ["budgets:read", "pools:read", "keys:write", "metrics:read"] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number] & Ability;

/** What each scope lets an assistant do, as the consent page and the docs say it. */
export const SCOPE_DESCRIPTIONS: Record<OAuthScope, string> = {
  "budgets:read": "See your team's capacity budgets",
  "pools:read": "See your team's pools, their live status and their keys' metadata",
  "keys:write": "Mint and revoke pool keys",
  "metrics:read": "Read pool metrics and access logs",
};

/**
 * The scopes a member of a team may grant: owners and admins all of them; members everything
 * but `keys:write` (as with API tokens, only owners and admins hand out credentials).
 *
 * @example
 * ```ts
 * scopesForRole("member"); // ["budgets:read", "pools:read", "metrics:read"]
 * ```
 */
export function scopesForRole(role: Role): OAuthScope[] {
  return role === "member"
    ? OAUTH_SCOPES.filter((scope) => scope !== "keys:write")
    : [...OAUTH_SCOPES];
}

/**
 * Parses a space-separated `scope` parameter: the known scopes in {@link OAUTH_SCOPES} order
 * and the unknown words apart. An absent or empty parameter asks for every scope.
 *
 * @example
 * ```ts
 * parseScope("pools:read budgets:read"); // { scopes: ["budgets:read", "pools:read"], unknown: [] }
 * ```
 */
export function parseScope(scope: string | null | undefined): {
  scopes: OAuthScope[];
  unknown: string[];
} {
  const words = (scope ?? "").split(" ").filter((word) => word !== "");
  if (words.length === 0) return { scopes: [...OAUTH_SCOPES], unknown: [] };
  const known = new Set<string>(OAUTH_SCOPES);
  return {
    scopes: OAUTH_SCOPES.filter((scope) => words.includes(scope)),
    unknown: words.filter((word) => !known.has(word)),
  };
}
