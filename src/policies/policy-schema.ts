import * as v from "valibot";
import { cidrIssue } from "./address-list.js";
import { DEFAULT_REQUEST_SKEW_MS } from "./request-signing.js";

const cidr = v.pipe(
  v.string(),
  v.trim(),
  v.check(
    (text) => cidrIssue(text) === null,
    (issue) => cidrIssue(String(issue.input)) ?? "",
  ),
);

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
 *
 * @example
 * ```ts
 * v.parse(CallerPoliciesSchema, { ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"] });
 * ```
 */
export const CallerPoliciesSchema = v.strictObject({
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
  ipAllowlist: v.optional(
    v.pipe(
      v.array(cidr),
      v.minLength(1, "List at least one CIDR (or leave ipAllowlist out)."),
      v.maxLength(1000),
    ),
  ),
});

/** A pool's caller policies (see {@link CallerPoliciesSchema}). */
export type CallerPolicies = v.InferOutput<typeof CallerPoliciesSchema>;
