import { looksLikeSecretKey, shownKeySetUrl } from "../../src/policies/policy-inputs.js";
import type { CallerPolicies } from "../../src/policies/policy-schema.js";
import { duplicateJsonKeys } from "../../src/util/json-duplicates.js";
import {
  addFieldError,
  type FieldErrorMap,
  type FormBody,
  formList,
  formText,
  numberField,
} from "./forms.js";

// The pool form's caller policy fields: text in, the apply file's `callerPolicies` object out.
// Only the shapes are turned from text here (lists, JSON); every rule is the apply file's
// CallerPoliciesSchema, which checks the result with the rest of the pool.

const P = "callerPolicies";

/** The caller policy fields of the pool form, named as the apply file's paths. */
export const POLICY_FIELDS = {
  ipAllowlist: `${P}.ipAllowlist`,
  hmac: `${P}.hmac`,
  hmacSkew: `${P}.hmac.skewSeconds`,
  jwt: `${P}.jwt`,
  jwtHeader: `${P}.jwt.header`,
  jwtAlgorithms: `${P}.jwt.algorithms`,
  jwtIssuer: `${P}.jwt.issuer`,
  jwtAudience: `${P}.jwt.audience`,
  jwtTolerance: `${P}.jwt.clockToleranceSeconds`,
  jwtClaims: `${P}.jwt.requiredClaims`,
  jwtJwks: `${P}.jwt.jwks`,
  jwtPublicKey: `${P}.jwt.publicKey`,
  jwtJwksUrl: `${P}.jwt.jwksUrl`,
  /** Where the "exactly one key source" rule is shown. */
  jwtKeys: `${P}.jwt.keys`,
  proxyPreset: `${P}.accessProxy.preset`,
  proxyTeamDomain: `${P}.accessProxy.teamDomain`,
  proxyAudience: `${P}.accessProxy.audience`,
  proxyJwks: `${P}.accessProxy.jwks`,
  proxyHeader: `${P}.accessProxy.header`,
  proxyTrusted: `${P}.accessProxy.trustedProxies`,
  proxyAllow: `${P}.accessProxy.allow`,
} as const;

const F = POLICY_FIELDS;
const CHECKBOXES = [F.hmac, F.jwt] as const;
const TEXT = Object.values(F).filter(
  (name) => !(CHECKBOXES as readonly string[]).includes(name) && name !== F.jwtAlgorithms,
);

/**
 * The caller policy fields of a posted pool form, as text (checkboxes "on" or "";
 * the algorithm checkboxes joined by commas).
 *
 * @example
 * ```ts
 * const values = { ...poolValues, ...readPolicyForm(form) };
 * ```
 */
export function readPolicyForm(form: FormBody): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of TEXT) values[name] = formText(form, name);
  for (const name of CHECKBOXES) values[name] = formText(form, name) === "" ? "" : "on";
  values[F.jwtAlgorithms] = formList(form, F.jwtAlgorithms).join(",");
  return values;
}

const json = (value: unknown) => (value === undefined ? "" : JSON.stringify(value, null, 2));

/**
 * The caller policy fields of a stored pool's form (or of a new pool: none set).
 *
 * @example
 * ```ts
 * policyFormValues({ ipAllowlist: ["10.0.0.0/8"] })["callerPolicies.ipAllowlist"]; // "10.0.0.0/8"
 * ```
 */
export function policyFormValues(policies: CallerPolicies | null): Record<string, string> {
  const { ipAllowlist, hmac, jwt, accessProxy } = policies ?? {};
  const proxy = accessProxy as Partial<Record<string, unknown>> | undefined;
  return {
    [F.ipAllowlist]: (ipAllowlist ?? []).join("\n"),
    [F.hmac]: hmac ? "on" : "",
    [F.hmacSkew]: hmac ? String(hmac.skewSeconds) : "",
    [F.jwt]: jwt ? "on" : "",
    [F.jwtHeader]: jwt?.header ?? "authorization",
    [F.jwtAlgorithms]: (jwt?.algorithms ?? ["RS256"]).join(","),
    [F.jwtIssuer]: jwt?.issuer ?? "",
    [F.jwtAudience]: [jwt?.audience ?? []].flat().join(", "),
    [F.jwtTolerance]: jwt ? String(jwt.clockToleranceSeconds) : "",
    // JSON, as the apply file has it: a value's type and any text in it survive a save.
    [F.jwtClaims]: json(jwt?.requiredClaims),
    [F.jwtJwks]: json(jwt?.jwks),
    [F.jwtPublicKey]: jwt?.publicKey ?? "",
    // Without a user, password or query an older setting may hold (see keptKeySetUrl).
    [F.jwtJwksUrl]: jwt?.jwksUrl ? shownKeySetUrl(jwt.jwksUrl) : "",
    [F.jwtKeys]: "",
    [F.proxyPreset]: accessProxy?.preset ?? "",
    [F.proxyTeamDomain]: typeof proxy?.teamDomain === "string" ? proxy.teamDomain : "",
    [F.proxyAudience]: typeof proxy?.audience === "string" ? proxy.audience : "",
    [F.proxyJwks]: json(proxy?.jwks),
    [F.proxyHeader]: typeof proxy?.header === "string" ? proxy.header : "x-auth-request-email",
    [F.proxyTrusted]: Array.isArray(proxy?.trustedProxies) ? proxy.trustedProxies.join("\n") : "",
    [F.proxyAllow]: Array.isArray(proxy?.allow) ? proxy.allow.join("\n") : "",
  };
}

/** Entries separated by commas, spaces or lines. */
const words = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter((w) => w !== "");
/** Entries separated by commas or lines (an entry may hold spaces). */
const items = (text: string | undefined) =>
  (text ?? "")
    .split(/[,\r\n]+/)
    .map((item) => item.trim())
    .filter((item) => item !== "");
const blankToUndefined = (text: string | undefined) => (text?.trim() ? text : undefined);

const KEY_SET_JSON = 'Must be JSON, a key set such as {"keys": [ … ]}.';
const CLAIMS_JSON =
  'Must be a JSON object of claims and allowed values, such as {"sub": ["svc-a"]}.';

/**
 * A JSON field's value (undefined when blank or not JSON, which is an error on the field). A
 * name given twice is an error too: JSON.parse would keep only the last, unseen.
 */
function parseJson(
  values: Record<string, string>,
  name: string,
  errors: FieldErrorMap,
  message = KEY_SET_JSON,
): unknown {
  const text = values[name]?.trim() ?? "";
  if (text === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    addFieldError(errors, name, message);
    return undefined;
  }
  for (const path of duplicateJsonKeys(text)) {
    addFieldError(errors, name, `${path} is given twice: give each name once.`);
  }
  return parsed;
}

/**
 * The JWKS URL to check: the stored one when the field still shows it as the form showed it
 * (its query kept, a user or password an older setting held dropped: it never worked),
 * else what was typed.
 */
function keptKeySetUrl(typed: string | undefined, stored: string | undefined) {
  const text = blankToUndefined(typed)?.trim();
  if (text === undefined || stored === undefined || !URL.canParse(stored)) return text;
  if (text !== shownKeySetUrl(stored)) return text;
  const url = new URL(stored);
  url.username = "";
  url.password = "";
  return url.href;
}

function jwtCandidate(
  values: Record<string, string>,
  errors: FieldErrorMap,
  stored: CallerPolicies["jwt"],
) {
  const audience = items(values[F.jwtAudience]);
  return {
    header: blankToUndefined(values[F.jwtHeader])?.trim(),
    algorithms: words(values[F.jwtAlgorithms]),
    issuer: values[F.jwtIssuer] ?? "",
    // Blank stays "" for the schema to name it; several are a list.
    audience: audience.length <= 1 ? (audience[0] ?? "") : audience,
    clockToleranceSeconds: numberField(values, F.jwtTolerance, errors),
    requiredClaims: parseJson(values, F.jwtClaims, errors, CLAIMS_JSON),
    jwks: parseJson(values, F.jwtJwks, errors),
    publicKey: blankToUndefined(values[F.jwtPublicKey]),
    jwksUrl: keptKeySetUrl(values[F.jwtJwksUrl], stored?.jwksUrl),
  };
}

function accessProxyCandidate(values: Record<string, string>, errors: FieldErrorMap) {
  const preset = values[F.proxyPreset];
  if (preset === "trusted-header") {
    const allow = items(values[F.proxyAllow]);
    return {
      preset,
      header: values[F.proxyHeader],
      // Blank stays an empty list: the schema names the missing proxies.
      trustedProxies: words(values[F.proxyTrusted]),
      allow: allow.length > 0 ? allow : undefined,
    };
  }
  const keys = {
    audience: values[F.proxyAudience] ?? "",
    jwks: parseJson(values, F.proxyJwks, errors),
  };
  return preset === "cloudflare-access"
    ? { preset, teamDomain: (values[F.proxyTeamDomain] ?? "").trim(), ...keys }
    : { preset, ...keys };
}

/** Drops the keys left undefined (the schema's objects are strict, and defaults apply to absent keys). */
function defined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The `callerPolicies` of the posted form for the apply file's schema, or null when none is
 * set; `stored` are the pool's current ones (a JWKS URL shown shortened is kept as stored).
 * Text that has no shape (JSON that does not parse, a name given twice) is an error on its
 * field here; everything else the schema checks.
 *
 * @example
 * ```ts
 * const callerPolicies = policyCandidate(values, errors, existing?.callerPolicies ?? null);
 * v.safeParse(BudgetPoolSchema, { ...pool, callerPolicies });
 * ```
 */
export function policyCandidate(
  values: Record<string, string>,
  errors: FieldErrorMap,
  stored: CallerPolicies | null,
): unknown {
  const ipAllowlist = words(values[F.ipAllowlist]);
  const policies = defined({
    ipAllowlist: ipAllowlist.length > 0 ? ipAllowlist : undefined,
    hmac:
      values[F.hmac] === "on"
        ? defined({ skewSeconds: numberField(values, F.hmacSkew, errors) })
        : undefined,
    jwt: values[F.jwt] === "on" ? defined(jwtCandidate(values, errors, stored?.jwt)) : undefined,
    accessProxy: values[F.proxyPreset] ? defined(accessProxyCandidate(values, errors)) : undefined,
  });
  return Object.keys(policies).length > 0 ? policies : null;
}

/**
 * The form field of a schema issue under `callerPolicies` (its dot path): the field of the
 * policy's setting, a list's field for an entry of it (`ipAllowlist.2` → `ipAllowlist`),
 * and the key source fields for the JWT rule across them.
 *
 * @example
 * ```ts
 * policyField("callerPolicies.jwt.audience.1"); // "callerPolicies.jwt.audience"
 * ```
 */
export function policyField(path: string): string {
  const [, policy, setting] = path.split(".");
  if (policy === "jwt" && setting === undefined) return F.jwtKeys;
  if (policy === "accessProxy" && (setting === undefined || setting === "preset")) {
    return F.proxyPreset;
  }
  // A list policy's entry (ipAllowlist.2) is shown at the list.
  if (setting === undefined || policy === "ipAllowlist") return `${P}.${policy ?? ""}`;
  return `${P}.${policy}.${setting}`;
}

const KEY_FIELDS = [F.jwtJwks, F.jwtPublicKey, F.proxyJwks] as const;

/**
 * The values to show a refused form with: a key field that holds private or secret key
 * material is emptied (the schema refuses it; it is never shown back, not even to its author).
 *
 * @example
 * ```tsx
 * <PoolFormPage values={withoutSecretKeys(values)} errors={errors} />
 * ```
 */
export function withoutSecretKeys(values: Record<string, string>): Record<string, string> {
  const shown = { ...values };
  for (const name of KEY_FIELDS) {
    if (looksLikeSecretKey(shown[name] ?? "")) shown[name] = "";
  }
  return shown;
}
