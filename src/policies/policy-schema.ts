import * as v from "valibot";
import { cidrIssue } from "./address-list.js";
import { allowEntryIssue } from "./claim-checks.js";
import {
  isPublicJwk,
  keySetUrlIssue,
  reservedHeaderIssue,
  SECRET_KEY_MESSAGE,
} from "./policy-inputs.js";
import { broadTrustedProxies } from "./proxy-width.js";
import { DEFAULT_REQUEST_SKEW_MS } from "./request-signing.js";
import {
  keysAlgorithmsIssue,
  type ReadKey,
  readJwkPublicKey,
  readPemPublicKey,
} from "./verification-keys.js";

/** The valid entries so broad that any client may be behind them (see `broadTrustedProxies`). */
const broadProxies = (list: readonly string[]) =>
  broadTrustedProxies(list.filter((entry) => cidrIssue(entry) === null));
const broadProxiesMessage = (broad: readonly string[]) =>
  `${broad.join(", ")} ${broad.length === 1 ? "is" : "are"} wider than a /8 (IPv4) or /16 (IPv6): any client there could send the header and name any identity. List only the addresses of your access proxy.`;

const TRUSTED_PROXIES_MISSING =
  "A trusted-header policy needs the proxy's addresses: list them in trustedProxies.";

/**
 * Messages of the policies' objects in a person's words (valibot's defaults, such as
 * `Invalid key: Expected never but received "secret"`, read like a stack trace), as the rest
 * of the apply file has them. A missing `trustedProxies` says what the preset needs.
 */
const objectMessage = (issue: v.BaseIssue<unknown>): string => {
  if (issue.expected === "Object") return "Must be a JSON object.";
  if (issue.received !== "undefined") return "Unknown field (check the spelling).";
  const field = issue.path?.at(-1)?.key;
  return field === "trustedProxies" ? TRUSTED_PROXIES_MISSING : "Required.";
};

// Bounds on what a policy may list: it is stored with the pool, compiled per catalog version
// and shown on its page; a list past these is a mistake (or worse), not a configuration.
const MAX_LIST = 1000;
const MAX_CLAIMS = 100;
const MAX_KEYS = 100;

/** A text field given as another JSON type (a number, a list…). */
const TEXT = "Must be text, in double quotes.";

/** A whole number of seconds within [min, max], each bound with its message. */
const wholeSeconds = (min: number, minMessage: string, max: number, maxMessage: string) =>
  v.pipe(
    v.number("Must be a whole number of seconds."),
    v.safeInteger("Must be a whole number of seconds."),
    v.minValue(min, minMessage),
    v.maxValue(max, maxMessage),
  );

const cidr = v.pipe(
  v.string('Must be an address or CIDR in double quotes, such as "10.0.0.0/8".'),
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
  v.string(TEXT),
  v.check(
    (text) => keySetUrlIssue(text) === null,
    (issue) => keySetUrlIssue(String(issue.input)) ?? "",
  ),
);
const nonEmptyText = v.pipe(
  v.string(TEXT),
  v.trim(),
  v.minLength(1, "Required."),
  v.maxLength(500),
);
const headerName = v.pipe(
  v.string(TEXT),
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
// Valibot runs every check of a pipe: those below stay quiet about input an earlier one refused.
const jwkIssue = (keys: readonly Readonly<Record<string, unknown>>[]): string | null => {
  if (!keys.every((key) => isPublicJwk(key))) return null;
  for (const [index, key] of keys.entries()) {
    const read = readJwkPublicKey(key, index);
    if ("issue" in read) return read.issue;
  }
  return null;
};
/** A pasted JWKS: `{ "keys": [ … ] }` (public keys only, each one Node can read). */
const jwksSchema = v.pipe(
  v.object(
    {
      keys: v.pipe(
        v.array(v.looseObject({ kty: v.string() }), 'Must be a list of keys: {"keys": [ … ]}.'),
        v.minLength(1, "List at least one key."),
        v.maxLength(MAX_KEYS, `At most ${MAX_KEYS} keys.`),
      ),
    },
    'Must be a key set: {"keys": [ … ]}.',
  ),
  v.check((jwks) => jwks.keys.every((key) => isPublicJwk(key)), SECRET_KEY_MESSAGE),
  v.check(
    (jwks) => jwkIssue(jwks.keys) === null,
    (issue) => jwkIssue((issue.input as { keys: Record<string, unknown>[] }).keys) ?? "",
  ),
);
const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----[\s\S]+-----END PUBLIC KEY-----$/;
const pemIssue = (text: string): string | null => {
  if (!PEM_PUBLIC_KEY.test(text)) return null;
  const read = readPemPublicKey(text);
  return "issue" in read ? read.issue : null;
};
const pemPublicKey = v.pipe(
  v.string(TEXT),
  v.trim(),
  // One spelling of the same key: a browser posts a textarea's line breaks as CRLF, and a file
  // saved on Windows may hold them; stored as LF, an unchanged save or re-apply stays unchanged.
  v.transform((text) => text.replace(/\r\n?/g, "\n")),
  v.check(
    (text) => PEM_PUBLIC_KEY.test(text),
    (issue) =>
      String(issue.input).includes("PRIVATE KEY")
        ? SECRET_KEY_MESSAGE
        : "Must be a PEM SPKI public key (-----BEGIN PUBLIC KEY-----).",
  ),
  v.check(
    (text) => pemIssue(text) === null,
    (issue) => pemIssue(String(issue.input)) ?? "",
  ),
);

/** The keys of a pasted set or PEM; null when one of them is refused for itself. */
const readKeys = (source: { jwks?: { keys: Record<string, unknown>[] }; publicKey?: string }) => {
  let read: ReadKey[] = [];
  if (source.jwks?.keys.every((key) => isPublicJwk(key))) {
    read = source.jwks.keys.map((key, index) => readJwkPublicKey(key, index));
  } else if (source.publicKey !== undefined && PEM_PUBLIC_KEY.test(source.publicKey)) {
    read = [readPemPublicKey(source.publicKey)];
  }
  const keys = read.flatMap((entry) => ("key" in entry ? [entry.key] : []));
  return keys.length > 0 && keys.length === read.length ? keys : null;
};
/** Why the pasted keys cannot verify any of `algorithms` (every token refused), or null. */
const keysIssue = (
  source: { jwks?: { keys: Record<string, unknown>[] }; publicKey?: string },
  algorithms: readonly string[],
): string | null => {
  const keys = readKeys(source);
  const known = algorithms.filter((alg) => (JWT_ALGORITHMS as readonly string[]).includes(alg));
  return keys === null || known.length === 0 ? null : keysAlgorithmsIssue(keys, known);
};
const claimValues = v.pipe(
  v.array(
    v.union(
      [v.string(), v.number(), v.boolean()],
      "Each allowed value must be a string, a number or true/false.",
    ),
    'List the allowed values in a JSON array, such as ["svc-a"].',
  ),
  v.minLength(1, "List at least one allowed value."),
  v.maxLength(MAX_LIST, `At most ${MAX_LIST} allowed values.`),
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
  // A list is an object to valibot's record: its indexes would become claim names.
  v.check(
    (input) => typeof input === "object" && input !== null && !Array.isArray(input),
    'Must be a JSON object of claims and allowed values, such as {"sub": ["svc-a"]}.',
  ),
  v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), claimValues),
  v.maxEntries(MAX_CLAIMS, `At most ${MAX_CLAIMS} required claims.`),
);

const JwtObject = v.strictObject(
  {
    /** Header carrying the token; `authorization` (the default) takes `Bearer <jwt>`. */
    header: v.optional(tokenHeader, "authorization"),
    algorithms: v.pipe(
      v.array(
        v.picklist(
          JWT_ALGORITHMS,
          "Must be an asymmetric JWS algorithm such as RS256, ES256 or EdDSA.",
        ),
        'List the algorithms in a JSON array, such as ["RS256"].',
      ),
      v.minLength(1, "List at least one algorithm."),
    ),
    issuer: nonEmptyText,
    audience: v.union(
      [
        nonEmptyText,
        v.pipe(
          v.array(nonEmptyText),
          v.minLength(1, "List at least one audience."),
          v.maxLength(MAX_LIST, `At most ${MAX_LIST} audiences.`),
        ),
      ],
      "Must be an audience in double quotes, or a list of them.",
    ),
    clockToleranceSeconds: v.optional(
      wholeSeconds(0, "At least 0.", 300, "At most 300 (five minutes)."),
      30,
    ),
    requiredClaims: v.optional(requiredClaims),
    jwks: v.optional(jwksSchema),
    publicKey: v.optional(pemPublicKey),
    jwksUrl: v.optional(keySetUrl),
  },
  objectMessage,
);

const keySourceCount = (jwt: { jwks?: unknown; publicKey?: unknown; jwksUrl?: unknown }) =>
  [jwt.jwks, jwt.publicKey, jwt.jwksUrl].filter((source) => source !== undefined).length;

type JwtPolicyInput = v.InferOutput<typeof JwtObject>;
/** The pasted keys (`jwks` or `publicKey`) must verify one of the algorithms: else every token is refused. */
const keysFitAlgorithms = (source: "jwks" | "publicKey") =>
  v.forward<JwtPolicyInput, v.BaseIssue<unknown>, ["jwks"] | ["publicKey"]>(
    v.check(
      (jwt) => keysIssue({ [source]: jwt[source] }, jwt.algorithms) === null,
      (issue) => {
        const jwt = issue.input as JwtPolicyInput;
        return keysIssue({ [source]: jwt[source] }, jwt.algorithms) ?? "";
      },
    ),
    [source],
  );

const JwtSchema = v.pipe(
  JwtObject,
  v.check(
    (jwt) => keySourceCount(jwt) === 1,
    "Give exactly one of jwks (pasted), publicKey (PEM) or jwksUrl.",
  ),
  keysFitAlgorithms("jwks"),
  keysFitAlgorithms("publicKey"),
);

/** A preset's pasted `jwks`: it must hold a key for the algorithm the proxy signs with. */
const presetJwks = (algorithm: string) =>
  v.pipe(
    jwksSchema,
    v.check(
      (jwks) => keysIssue({ jwks }, [algorithm]) === null,
      (issue) => keysIssue({ jwks: issue.input as never }, [algorithm]) ?? "",
    ),
  );

const AccessProxySchema = v.variant(
  "preset",
  [
    v.strictObject(
      {
        preset: v.literal("cloudflare-access"),
        /** `<team>.cloudflareaccess.com`: the issuer, and where the certs are fetched unless `jwks` is pasted. */
        teamDomain: v.pipe(
          v.string(TEXT),
          v.toLowerCase(),
          v.regex(
            /^[a-z0-9-]+(\.[a-z0-9-]+)+$/,
            "Must be your team domain, such as acme.cloudflareaccess.com.",
          ),
        ),
        /** The application's Audience (AUD) tag. */
        audience: nonEmptyText,
        jwks: v.optional(presetJwks("RS256")),
      },
      objectMessage,
    ),
    v.strictObject(
      {
        preset: v.literal("google-iap"),
        /** `/projects/<number>/global/backendServices/<id>` or `/projects/<number>/apps/<project>`. */
        audience: nonEmptyText,
        jwks: v.optional(presetJwks("ES256")),
      },
      objectMessage,
    ),
    v.strictObject(
      {
        preset: v.literal("trusted-header"),
        header: v.optional(
          v.picklist(
            ["x-auth-request-email", "x-forwarded-email"],
            "Must be x-auth-request-email or x-forwarded-email.",
          ),
          "x-auth-request-email",
        ),
        /** The proxies (CIDRs) that set the header: requests from anywhere else are refused. */
        trustedProxies: v.pipe(
          v.array(cidr, "List the proxy's addresses (CIDRs) in trustedProxies."),
          v.minLength(1, TRUSTED_PROXIES_MISSING),
          v.maxLength(MAX_LIST, `At most ${MAX_LIST} entries.`),
          v.check(
            (list) => broadProxies(list).length === 0,
            (issue) => broadProxiesMessage(broadProxies(issue.input as string[])),
          ),
        ),
        /** Exact addresses or `@domain` entries; absent: any identity the proxy vouches for. */
        allow: v.optional(
          v.pipe(
            v.array(
              v.pipe(
                nonEmptyText,
                v.check(
                  (entry) => allowEntryIssue(entry) === null,
                  (issue) => allowEntryIssue(String(issue.input)) ?? "",
                ),
              ),
              'List the allowed addresses in a JSON array, such as ["@acme.test"].',
            ),
            v.maxLength(MAX_LIST, `At most ${MAX_LIST} entries.`),
          ),
        ),
      },
      objectMessage,
    ),
  ],
  "preset must be cloudflare-access, google-iap or trusted-header.",
);

const CallerPoliciesObject = v.strictObject(
  {
    hmac: v.optional(
      v.strictObject(
        {
          skewSeconds: v.optional(
            wholeSeconds(1, "At least 1 (a second).", 3600, "At most 3600 (an hour)."),
            DEFAULT_REQUEST_SKEW_MS / 1000,
          ),
        },
        objectMessage,
      ),
    ),
    jwt: v.optional(JwtSchema),
    accessProxy: v.optional(AccessProxySchema),
    ipAllowlist: v.optional(
      v.pipe(
        v.array(cidr, 'List the CIDRs in a JSON array, such as ["10.0.0.0/8"].'),
        v.minLength(1, "List at least one CIDR (or leave ipAllowlist out)."),
        v.maxLength(1000, "At most 1000 entries."),
      ),
    ),
  },
  objectMessage,
);

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
