import { shownKeySetUrl } from "../../../src/policies/policy-inputs.js";
import type {
  AccessProxyPolicy,
  CallerPolicies,
  JwtPolicy,
} from "../../../src/policies/policy-schema.js";

const list = (values: readonly unknown[]) => values.map((value) => String(value)).join(", ");

function keySource(keys: { jwks?: { keys: unknown[] }; publicKey?: string; jwksUrl?: string }) {
  if (keys.jwks) return `pasted JWKS (${keys.jwks.keys.length} keys)`;
  if (keys.publicKey) return "PEM public key";
  return `JWKS URL ${shownKeySetUrl(keys.jwksUrl ?? "")}`;
}

function jwtLine(jwt: JwtPolicy): string {
  const claims = Object.entries(jwt.requiredClaims ?? {})
    // As JSON: "123" and 123, "true" and true, "a, b" and a, b are different requirements.
    .map(
      ([claim, allowed]) =>
        `${claim} in ${allowed.map((value) => JSON.stringify(value)).join(", ")}`,
    )
    .join("; ");
  return [
    `issuer ${jwt.issuer}`,
    `audience ${list([jwt.audience].flat())}`,
    `algorithms ${list(jwt.algorithms)}`,
    `in ${jwt.header}`,
    `keys: ${keySource(jwt)}`,
    `clock tolerance ${jwt.clockToleranceSeconds} s`,
    ...(claims ? [`required claims: ${claims}`] : []),
  ].join(", ");
}

function accessProxyLine(policy: AccessProxyPolicy): string {
  switch (policy.preset) {
    case "cloudflare-access":
      return `Cloudflare Access, team ${policy.teamDomain}, audience ${policy.audience}, keys: ${policy.jwks ? keySource(policy) : "the team's certs URL"}`;
    case "google-iap":
      return `Google IAP, audience ${policy.audience}, keys: ${policy.jwks ? keySource(policy) : "Google's public keys URL"}`;
    case "trusted-header":
      return `trusted header ${policy.header} from ${list(policy.trustedProxies)}, allowing ${policy.allow ? list(policy.allow) : "anyone the proxy vouches for"}`;
  }
}

/**
 * The pool page's list of its caller policies, as settings a person reads (nothing in them
 * is secret: JWT keys are public, HMAC secrets belong to the keys).
 *
 * @example
 * ```tsx
 * <CallerPolicySummary policies={pool.callerPolicies} />
 * ```
 */
export function CallerPolicySummary(props: { policies: CallerPolicies | null }) {
  const policies = props.policies ?? {};
  const lines: Array<[string, string]> = [];
  if (policies.ipAllowlist) lines.push(["IP allowlist", list(policies.ipAllowlist)]);
  if (policies.hmac) {
    lines.push(["HMAC request signing", `on, window ${policies.hmac.skewSeconds} s`]);
  }
  if (policies.jwt) lines.push(["JWT", jwtLine(policies.jwt)]);
  if (policies.accessProxy) lines.push(["Access proxy", accessProxyLine(policies.accessProxy)]);
  return (
    <section id="caller-policy-summary">
      <h2>Caller policies</h2>
      {lines.length === 0 ? (
        <p class="muted">None: the pool key rule alone admits callers.</p>
      ) : (
        <ul>
          {lines.map(([name, text]) => (
            <li data-policy={name}>
              <b>{name}:</b> {text}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
