import * as v from "valibot";
import { cidrIssue } from "./address-list.js";
import { allowEntryIssue } from "./claim-checks.js";
import {
  isPublicJwk,
  keySetUrlIssue,
  reservedHeaderIssue,
  SECRET_KEY_MESSAGE,
} from "./policy-inputs.js";
import { DEFAULT_REQUEST_SKEW_MS } from "./request-signing.js";

const cidr = v.pipe(
  v.string(),
  v.trim(),
  v.check(
    (text) => cidrIssue(text) === null,
    (issue) => cidrIssue(String(issue.input)) ?? "",
  ),
);

/** Signature algorithms a JWT may use: asymmetric only (a pool never holds a shared JWT secret). */
export const JWT_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

/** https, or http on a loopback host (a key server on the same machine, development). */
const keySetUrl = v.pipe(
  v.string(),
  v.check(
    (text) => keySetUrlIssue(text) === null,
    (issue) => keySetUrlIssue(String(issue.input)) ?? "",
  ),
);
const nonEmptyText = v.pipe(v.string(), v.trim(), v.minLength(1, "Required."), v.maxLength(500));
const headerName = v.pipe(
  v.string(),
  v.toLowerCase(),
  v.regex(/^[a-z0-9!#$%&'*+.^_`|~-]{1,100}$/, "Must be an HTTP header name."),
);
/** The header a token comes in: not one the connection or Sluice itself owns. */
const tokenHeader = v.pipe(
  headerName,
  v.check(
    (name) => reservedHeaderIssue(name) === null,
    (issue) => reservedHeaderIssue(String(issue.input).toLowerCase()) ?? "",
  ),
);
/** A pasted JWKS: `{ "keys": [ … ] }` (public keys only). */
const jwksSchema = v.pipe(
  v.object({ keys: v.pipe(v.array(v.looseObject({ kty: v.string() })), v.minLength(1)) }),
  v.check((jwks) => jwks.keys.every((key) => isPublicJwk(key)), SECRET_KEY_MESSAGE),
);
const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----[\s\S]+-----END PUBLIC KEY-----$/;
const pemPublicKey = v.pipe(
  v.string(),
  v.trim(),
  v.check(
    (text) => PEM_PUBLIC_KEY.test(text),
    (issue) =>
      String(issue.input).includes("PRIVATE KEY")
        ? SECRET_KEY_MESSAGE
        : "Must be a PEM SPKI public key (-----BEGIN PUBLIC KEY-----).",
  ),
);
const claimValues = v.pipe(
  v.array(v.union([v.string(), v.number(), v.boolean()])),
  v.minLength(1, "List at least one allowed value."),
);
// Names an object reader drops or resolves on Object.prototype: a requirement on one would
// silently vanish (valibot's record skips them), so it is refused instead.
const UNSAFE_CLAIM_NAMES = ["__proto__", "constructor", "prototype"];
const requiredClaims = v.pipe(
  v.unknown(),
  v.check(
    (input) =>
      typeof input !== "object" ||
      input === null ||
      UNSAFE_CLAIM_NAMES.every((name) => !Object.hasOwn(input, name)),
    (issue) =>
      `${UNSAFE_CLAIM_NAMES.find((name) => Object.hasOwn(issue.input as object, name))} cannot be a claim name here (it would be dropped): name the claim another way.`,
  ),
  v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), claimValues),
);

const JwtObject = v.strictObject({
  /** Header carrying the token; `authorization` (the default) takes `Bearer <jwt>`. */
  header: v.optional(tokenHeader, "authorization"),
  algorithms: v.pipe(
    v.array(
      v.picklist(
        JWT_ALGORITHMS,
        "Must be an asymmetric JWS algorithm such as RS256, ES256 or EdDSA.",
      ),
    ),
    v.minLength(1, "List at least one algorithm."),
  ),
  issuer: nonEmptyText,
  audience: v.union([nonEmptyText, v.pipe(v.array(nonEmptyText), v.minLength(1))]),
  clockToleranceSeconds: v.optional(
    v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(300)),
    30,
  ),
  requiredClaims: v.optional(requiredClaims),
  jwks: v.optional(jwksSchema),
  publicKey: v.optional(pemPublicKey),
  jwksUrl: v.optional(keySetUrl),
});

const keySourceCount = (jwt: { jwks?: unknown; publicKey?: unknown; jwksUrl?: unknown }) =>
  [jwt.jwks, jwt.publicKey, jwt.jwksUrl].filter((source) => source !== undefined).length;

const JwtSchema = v.pipe(
  JwtObject,
  v.check(
    (jwt) => keySourceCount(jwt) === 1,
    "Give exactly one of jwks (pasted), publicKey (PEM) or jwksUrl.",
  ),
);

const AccessProxySchema = v.variant("preset", [
  v.strictObject({
    preset: v.literal("cloudflare-access"),
    /** `<team>.cloudflareaccess.com`: the issuer, and where the certs are fetched unless `jwks` is pasted. */
    teamDomain: v.pipe(
      v.string(),
      v.toLowerCase(),
      v.regex(
        /^[a-z0-9-]+(\.[a-z0-9-]+)+$/,
        "Must be your team domain, such as acme.cloudflareaccess.com.",
      ),
    ),
    /** The application's Audience (AUD) tag. */
    audience: nonEmptyText,
    jwks: v.optional(jwksSchema),
  }),
  v.strictObject({
    preset: v.literal("google-iap"),
    /** `/projects/<number>/global/backendServices/<id>` or `/projects/<number>/apps/<project>`. */
    audience: nonEmptyText,
    jwks: v.optional(jwksSchema),
  }),
  v.strictObject({
    preset: v.literal("trusted-header"),
    header: v.optional(
      v.picklist(["x-auth-request-email", "x-forwarded-email"]),
      "x-auth-request-email",
    ),
    /** The proxies (CIDRs) that set the header: requests from anywhere else are refused. */
    trustedProxies: v.pipe(
      v.array(cidr, "List the proxy's addresses (CIDRs) in trustedProxies."),
      v.minLength(
        1,
        "A trusted-header policy needs the proxy's addresses: list them in trustedProxies.",
      ),
    ),
    /** Exact addresses or `@domain` entries; absent: any identity the proxy vouches for. */
    allow: v.optional(
      v.array(
        v.pipe(
          nonEmptyText,
          v.check(
            (entry) => allowEntryIssue(entry) === null,
            (issue) => allowEntryIssue(String(issue.input)) ?? "",
          ),
        ),
      ),
    ),
  }),
]);

const CallerPoliciesObject = v.strictObject({
  hmac: v.optional(
    v.strictObject({
      skewSeconds: v.optional(
        v.pipe(
          v.number(),
          v.safeInteger(),
          v.minValue(1),
          v.maxValue(3600, "At most 3600 (an hour)."),
        ),
        DEFAULT_REQUEST_SKEW_MS / 1000,
      ),
    }),
  ),
  jwt: v.optional(JwtSchema),
  accessProxy: v.optional(AccessProxySchema),
  ipAllowlist: v.optional(
    v.pipe(
      v.array(cidr),
      v.minLength(1, "List at least one CIDR (or leave ipAllowlist out)."),
      v.maxLength(1000),
    ),
  ),
});

/** The header an access-proxy preset reads its assertion or identity from. */
function accessProxyHeader(policy: v.InferOutput<typeof AccessProxySchema>): string {
  if (policy.preset === "cloudflare-access") return "cf-access-jwt-assertion";
  if (policy.preset === "google-iap") return "x-goog-iap-jwt-assertion";
  return policy.header;
}

/**
 * A pool's caller policies, as the apply file and the catalog hold them (one schema gives
 * the type and the validation). Every policy set must pass, on top of the pool key rule.
 *
 * - `ipAllowlist`: CIDRs or addresses (IPv4, IPv6; IPv4-mapped addresses match their IPv4
 *   ranges) the caller's address must be in; the address is read through the server's
 *   trusted proxies (`X-Forwarded-For`). A miss answers 403 `unauthorized`.
 * - `hmac`: each request is signed with the key's request-signing secret (minted with the
 *   key when the pool has this policy) over method, path and query, body digest, timestamp
 *   and nonce (`signLockRequest`). A timestamp more than `skewSeconds` (default 300) away
 *   from the server's clock, a nonce seen before within that window, a bad signature or a
 *   key without such a secret: 401 `unauthorized`.
 * - `jwt`: a bearer JWT (header configurable) verified with `jose` against a pasted `jwks`,
 *   a PEM `publicKey` or a `jwksUrl` (cached, fetched with a timeout); fixed asymmetric
 *   `algorithms`, `issuer`, `audience` and `exp` required, `clockToleranceSeconds`, and
 *   optional `requiredClaims` (claim → allowed values). Invalid: 401 `unauthorized`.
 * - `accessProxy`: a verified identity from a fronting proxy: `cloudflare-access`
 *   (`Cf-Access-Jwt-Assertion`), `google-iap` (`x-goog-iap-jwt-assertion`), or
 *   `trusted-header` (oauth2-proxy's e-mail header, believed only from `trustedProxies`).
 *
 * @example
 * ```ts
 * v.parse(CallerPoliciesSchema, { ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"] });
 * ```
 */
export const CallerPoliciesSchema = v.pipe(
  CallerPoliciesObject,
  v.forward(
    v.check(
      (policies) =>
        !policies.jwt ||
        !policies.accessProxy ||
        policies.jwt.header !== accessProxyHeader(policies.accessProxy),
      "This is the access proxy's header: the JWT policy needs a header of its own.",
    ),
    ["jwt", "header"],
  ),
);

/** A pool's `jwt` policy. */
export type JwtPolicy = v.InferOutput<typeof JwtSchema>;
/** A pool's `accessProxy` policy. */
export type AccessProxyPolicy = v.InferOutput<typeof AccessProxySchema>;

/** A pool's caller policies (see {@link CallerPoliciesSchema}). */
export type CallerPolicies = v.InferOutput<typeof CallerPoliciesSchema>;
