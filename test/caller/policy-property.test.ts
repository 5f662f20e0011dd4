import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallerPolicies } from "../../src/policies/policy-schema.js";
import { signLockRequest } from "../../src/policies/request-signing.js";
import { createHarness, type Harness, readBody } from "../lock-api/harness.js";

const BODY = '{"waitMs":0}';
const ALLOWED = "203.0.113.0/24";

/** One pool per combination of policies. */
const POOLS: Record<string, CallerPolicies | null> = {
  open: null,
  ip: { ipAllowlist: [ALLOWED] },
  hmac: { hmac: { skewSeconds: 300 } },
  both: { ipAllowlist: [ALLOWED], hmac: { skewSeconds: 300 } },
};

type KeyProof = "valid" | "absent" | "other-pool";
type Forwarded = "allowed" | "outside" | "spoofed-left" | "none";
type Signature = "valid" | "absent" | "tampered-body" | "stale" | "other-secret" | "replay";

interface Attempt {
  pool: keyof typeof POOLS;
  key: KeyProof;
  forwarded: Forwarded;
  signature: Signature;
}

const FORWARDED: Record<Forwarded, string | null> = {
  allowed: "203.0.113.9",
  outside: "198.51.100.1",
  // The caller writes an allowed address; the trusted proxy appends the real one.
  "spoofed-left": "203.0.113.9, 198.51.100.1",
  none: null,
};

/**
 * The property of issue 18: no acquire without every proof its pool's policies ask for ever
 * gets a slot, and every acquire with all of them does (the reference model), over a real
 * socket, whatever the mix of pools, keys, forwarded addresses and signatures.
 */
describe("caller policies (property)", () => {
  let h: Harness;
  const keys: Record<string, { id: number; plaintext: string; secret: string | undefined }> = {};

  beforeAll(async () => {
    h = await createHarness({ trustedProxies: ["127.0.0.1/32"] });
    for (const [subdomain, callerPolicies] of Object.entries(POOLS)) {
      await h.addPool({ subdomain, maxConcurrent: 100, callerPolicies });
      const minted = await h.mintKey(subdomain);
      keys[subdomain] = {
        id: minted.key.id,
        plaintext: minted.plaintext,
        secret: minted.requestSecret,
      };
    }
    await h.addPool({ subdomain: "elsewhere", maxConcurrent: 1 });
    keys.elsewhere = {
      id: 0,
      plaintext: (await h.mintKey("elsewhere")).plaintext,
      secret: undefined,
    };
  });
  afterAll(async () => h.close());

  it("grants a slot exactly when every configured proof is present", async () => {
    const granted = new Map<string, Record<string, string>>();
    const attempt = fc.record<Attempt>({
      pool: fc.constantFrom(...(Object.keys(POOLS) as (keyof typeof POOLS)[])),
      key: fc.constantFrom<KeyProof>("valid", "valid", "absent", "other-pool"),
      forwarded: fc.constantFrom<Forwarded>(
        "allowed",
        "allowed",
        "outside",
        "spoofed-left",
        "none",
      ),
      signature: fc.constantFrom<Signature>(
        "valid",
        "valid",
        "absent",
        "tampered-body",
        "stale",
        "other-secret",
        "replay",
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 8 }), async (attempts) => {
        for (const a of attempts) {
          const path = `/pools/${a.pool}/lock/acquire`;
          const signature = signatureHeaders(a, path);
          if (signature === null) continue; // a replay with nothing granted yet to replay
          const headers = { ...signature };
          const own = keys[a.pool] as (typeof keys)[string];
          if (a.key === "valid") headers["x-svc-key"] = own.plaintext;
          if (a.key === "other-pool")
            headers["x-svc-key"] = (keys.elsewhere as (typeof keys)[string]).plaintext;
          const forwarded = FORWARDED[a.forwarded];
          if (forwarded !== null) headers["x-forwarded-for"] = forwarded;
          const body = a.signature === "tampered-body" ? '{"waitMs":1}' : BODY;
          const response = await h.lockPost(path, { headers, body });
          const policies = POOLS[a.pool] ?? null;
          const expected =
            a.key === "valid" &&
            (!policies?.ipAllowlist || a.forwarded === "allowed") &&
            (!policies?.hmac || a.signature === "valid");
          if (response.status === 200) {
            // Released before any assertion, so a failing run leaks no slot into the next.
            const { slotId } = await readBody(response);
            await h.lockPost(`/pools/${a.pool}/lock/${slotId}/release`, { key: own.plaintext });
            granted.set(a.pool, signature);
          }
          expect({ ...a, granted: response.status === 200 }).toEqual({ ...a, granted: expected });
          if (!expected) expect([401, 403]).toContain(response.status);
        }
        for (const pool of Object.keys(POOLS)) expect((await h.governor.status(pool)).held).toBe(0);
      }),
      { numRuns: 40 },
    );

    function signatureHeaders(a: Attempt, path: string): Record<string, string> | null {
      if (a.signature === "absent") return {};
      if (a.signature === "replay") {
        const previous = granted.get(a.pool);
        return previous ? { ...previous } : null;
      }
      const own = keys[a.pool] as (typeof keys)[string];
      const other = keys.hmac as (typeof keys)[string];
      const secret =
        a.signature === "other-secret"
          ? a.pool === "hmac"
            ? "slc_req_forged"
            : other.secret
          : own.secret;
      return signLockRequest({
        secret: secret ?? "slc_req_no-secret-for-this-pool",
        keyId: own.id,
        method: "POST",
        url: path,
        body: BODY,
        timestamp: h.clock.now() - (a.signature === "stale" ? 300_001 : 0),
      });
    }
  });
});
