import { JWT_ALGORITHMS } from "../../../src/policies/policy-schema.js";
import type { FieldErrorMap } from "../forms.js";
import { POLICY_FIELDS as F } from "../policy-form.js";
import { Check, Field, FieldErrors } from "./layout.js";

type Values = Record<string, string>;

function TextArea(props: {
  label: string;
  name: string;
  values: Values;
  errors: FieldErrorMap | undefined;
  hint: string;
  rows?: number;
  placeholder?: string;
}) {
  return (
    <label>
      <span>{props.label}</span>
      <textarea
        name={props.name}
        rows={props.rows ?? 3}
        placeholder={props.placeholder}
        aria-invalid={props.errors?.[props.name] ? "true" : undefined}
      >
        {props.values[props.name]}
      </textarea>
      <small class="muted">{props.hint}</small>
      <FieldErrors errors={props.errors} name={props.name} />
    </label>
  );
}

function JwtFields(props: { values: Values; errors: FieldErrorMap | undefined }) {
  const { values, errors } = props;
  const algorithms = new Set((values[F.jwtAlgorithms] ?? "").split(","));
  return (
    <fieldset>
      <legend>JWT</legend>
      <Check name={F.jwt} label="Require a verified bearer JWT" values={values} />
      <FieldErrors errors={errors} name={F.jwt} />
      <Field
        label="Header"
        name={F.jwtHeader}
        value={values[F.jwtHeader]}
        errors={errors}
        hint="authorization (as Bearer <jwt>; callers then send the pool key in X-Svc-Key) or a header of your own such as x-caller-token (not X-Svc-…, Host or a hop-by-hop header)"
      />
      <div>
        <span>Algorithms</span>
        <div class="actions">
          {JWT_ALGORITHMS.map((algorithm) => (
            <label class="check">
              <input
                type="checkbox"
                name={F.jwtAlgorithms}
                value={algorithm}
                checked={algorithms.has(algorithm)}
              />
              <span>{algorithm}</span>
            </label>
          ))}
        </div>
        <FieldErrors errors={errors} name={F.jwtAlgorithms} />
      </div>
      <Field label="Issuer (iss)" name={F.jwtIssuer} value={values[F.jwtIssuer]} errors={errors} />
      <Field
        label="Audience (aud)"
        name={F.jwtAudience}
        value={values[F.jwtAudience]}
        errors={errors}
        hint="One value, or several separated by commas (the token's aud must hold one)."
      />
      <Field
        label="Clock tolerance (s)"
        name={F.jwtTolerance}
        type="number"
        value={values[F.jwtTolerance]}
        errors={errors}
        hint="Empty for 30."
      />
      <TextArea
        label="Required claims"
        name={F.jwtClaims}
        values={values}
        errors={errors}
        rows={4}
        placeholder='{"sub": ["svc-reports", "svc-batch"], "admin": [true]}'
        hint="A JSON object, as in the apply file: each claim and the values it may take (a string, number or boolean, matched exactly)."
      />
      <p class="muted">Keys: exactly one of the three below (public keys only).</p>
      <FieldErrors errors={errors} name={F.jwtKeys} />
      <TextArea
        label="JWKS (pasted)"
        name={F.jwtJwks}
        values={values}
        errors={errors}
        rows={4}
        placeholder='{"keys": [ … ]}'
        hint="A JSON Web Key Set with the issuer's public keys (never a private or secret key)."
      />
      <TextArea
        label="Public key (PEM)"
        name={F.jwtPublicKey}
        values={values}
        errors={errors}
        rows={4}
        placeholder="-----BEGIN PUBLIC KEY-----"
        hint="An SPKI public key."
      />
      <Field
        label="JWKS URL"
        name={F.jwtJwksUrl}
        type="url"
        value={values[F.jwtJwksUrl]}
        errors={errors}
        hint="https (http only on localhost), without user:password@ or #fragment; fetched with a timeout and cached, from public addresses only unless the server runs with --jwks-network private. A query is shown as ?… and kept."
      />
    </fieldset>
  );
}

const PRESETS = [
  ["", "None"],
  ["cloudflare-access", "Cloudflare Access (Cf-Access-Jwt-Assertion)"],
  ["google-iap", "Google IAP (x-goog-iap-jwt-assertion)"],
  ["trusted-header", "Trusted header from a proxy (oauth2-proxy)"],
] as const;

function AccessProxyFields(props: { values: Values; errors: FieldErrorMap | undefined }) {
  const { values, errors } = props;
  const header = values[F.proxyHeader];
  return (
    <fieldset>
      <legend>Access proxy</legend>
      <label>
        <span>Preset</span>
        <select name={F.proxyPreset}>
          {PRESETS.map(([value, label]) => (
            <option value={value} selected={values[F.proxyPreset] === value}>
              {label}
            </option>
          ))}
        </select>
        <FieldErrors errors={errors} name={F.proxyPreset} />
      </label>
      <Field
        label="Team domain (Cloudflare Access)"
        name={F.proxyTeamDomain}
        value={values[F.proxyTeamDomain]}
        errors={errors}
        hint="acme.cloudflareaccess.com"
      />
      <Field
        label="Audience (Cloudflare Access, Google IAP)"
        name={F.proxyAudience}
        value={values[F.proxyAudience]}
        errors={errors}
        hint="Cloudflare: the application's AUD tag; IAP: /projects/<number>/global/backendServices/<id>"
      />
      <TextArea
        label="JWKS (Cloudflare Access, Google IAP; optional)"
        name={F.proxyJwks}
        values={values}
        errors={errors}
        hint="Pasted keys instead of fetching the proxy's certs URL."
      />
      <label>
        <span>Identity header (trusted header)</span>
        <select name={F.proxyHeader}>
          <option value="x-auth-request-email" selected={header !== "x-forwarded-email"}>
            x-auth-request-email
          </option>
          <option value="x-forwarded-email" selected={header === "x-forwarded-email"}>
            x-forwarded-email
          </option>
        </select>
        <FieldErrors errors={errors} name={F.proxyHeader} />
      </label>
      <TextArea
        label="Trusted proxies (trusted header)"
        name={F.proxyTrusted}
        values={values}
        errors={errors}
        placeholder="10.0.0.5/32"
        hint="The proxy's addresses (CIDRs): the header is believed only from these socket peers. Required for this preset."
      />
      <TextArea
        label="Allowed identities (trusted header; optional)"
        name={F.proxyAllow}
        values={values}
        errors={errors}
        placeholder="@acme.test"
        hint="Exact addresses or @domain entries, one a line; empty: anyone the proxy vouches for."
      />
    </fieldset>
  );
}

/**
 * The pool form's caller policies (`docs/caller-policies.md`): the apply file's
 * `callerPolicies`, field by field. None of them is a secret (JWT keys are public; the HMAC
 * secrets belong to the keys and are shown once when a key is minted).
 *
 * @example
 * ```tsx
 * <CallerPolicyFields values={values} errors={errors} />
 * ```
 */
export function CallerPolicyFields(props: { values: Values; errors?: FieldErrorMap | undefined }) {
  const { values, errors } = props;
  return (
    <fieldset id="caller-policies">
      <legend>Caller policies</legend>
      <p class="muted">
        Proofs a caller must bring on top of the pool key, checked before a slot is taken (Lock API
        acquire, proxied requests, SQL). Every policy set must pass.
      </p>
      <TextArea
        label="IP allowlist"
        name={F.ipAllowlist}
        values={values}
        errors={errors}
        placeholder={"10.0.0.0/8\n2001:db8::/32"}
        hint="CIDRs or addresses, one a line; empty: any address. Others get 403."
      />
      <fieldset>
        <legend>HMAC request signing</legend>
        <Check
          name={F.hmac}
          label="Require signed requests"
          values={values}
          hint="keys minted from now on get a request-signing secret, shown once"
        />
        <FieldErrors errors={errors} name={F.hmac} />
        <Field
          label="Allowed clock skew (s)"
          name={F.hmacSkew}
          type="number"
          value={values[F.hmacSkew]}
          errors={errors}
          hint="Empty for 300."
        />
      </fieldset>
      <JwtFields values={values} errors={errors} />
      <AccessProxyFields values={values} errors={errors} />
    </fieldset>
  );
}
