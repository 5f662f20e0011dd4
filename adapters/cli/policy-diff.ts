import { shownKeySetUrl } from "../../src/policies/policy-inputs.js";
import type { CallerPolicies } from "../../src/policies/policy-schema.js";

/**
 * The policies as the CLI prints them (`apply`, `status --json`): a JWKS URL without its
 * user, password or query, which may hold a token.
 *
 * @example
 * ```ts
 * shownPolicies({ jwt: { jwksUrl: "https://idp.example/jwks?token=x", … } }); // jwksUrl "https://idp.example/jwks?…"
 * ```
 */
export function shownPolicies(policies: CallerPolicies | null): CallerPolicies | null {
  if (policies?.jwt?.jwksUrl === undefined) return policies ?? null;
  const jwksUrl = shownKeySetUrl(policies.jwt.jwksUrl);
  return { ...policies, jwt: { ...policies.jwt, jwksUrl } };
}

function shown(policies: CallerPolicies | null): string {
  return JSON.stringify(shownPolicies(policies));
}

/**
 * The plan's line for a change of `callerPolicies`, or none. A JWKS URL's query may hold a
 * token (the pages show it as `?…` and logs leave it out), so the line does too; a change
 * of the query alone is said in words.
 *
 * @example
 * ```ts
 * diffCallerPolicies(stored.callerPolicies, desired.callerPolicies);
 * // ['callerPolicies {"jwt":{…"jwksUrl":"https://idp.example/jwks?…"}} → … (the JWKS URL\'s query changed)']
 * ```
 */
export function diffCallerPolicies(
  before: CallerPolicies | null,
  after: CallerPolicies | null,
): string[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const [a, b] = [shown(before), shown(after)];
  const queryOnly = a === b ? " (the JWKS URL's query changed)" : "";
  return [`callerPolicies ${a === "null" ? "none" : a} → ${b === "null" ? "none" : b}${queryOnly}`];
}
