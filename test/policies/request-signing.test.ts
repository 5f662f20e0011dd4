import { describe, expect, it } from "vitest";
import {
  callerSignatureBase,
  checkRequestSignature,
  REQUEST_SIGNATURE_HEADERS,
  signLockRequest,
} from "../../src/policies/request-signing.js";
import { bodyDigestHex, canonicalString } from "../../src/signing/canonical-request.js";

const SECRET = "slc_req_test-secret";
const NOW = 1_700_000_000_000;
const SKEW = 300_000;

function signed(overrides: Partial<Parameters<typeof signLockRequest>[0]> = {}) {
  const headers = signLockRequest({
    secret: SECRET,
    keyId: 12,
    method: "POST",
    url: "https://sluice.example/pools/llm/lock/acquire?x=1",
    body: '{"waitMs":100}',
    timestamp: NOW,
    nonce: "nonce-0123456789abcdef",
    ...overrides,
  });
  return {
    timestamp: headers[REQUEST_SIGNATURE_HEADERS.timestamp] ?? null,
    nonce: headers[REQUEST_SIGNATURE_HEADERS.nonce] ?? null,
    signature: headers[REQUEST_SIGNATURE_HEADERS.signature] ?? null,
  };
}

const check = (presented: ReturnType<typeof signed>, overrides: Record<string, unknown> = {}) =>
  checkRequestSignature({
    presented,
    secret: SECRET,
    keyId: "12",
    method: "POST",
    pathAndQuery: "/pools/llm/lock/acquire?x=1",
    body: '{"waitMs":100}',
    now: NOW,
    skewMs: SKEW,
    ...overrides,
  });

describe("caller request signatures (hmac policy)", () => {
  it("signs the origin canonical string between a version line and the nonce", () => {
    const fields = {
      timestamp: NOW,
      nonce: "nonce-0123456789abcdef",
      method: "post",
      pathAndQuery: "/a?b=1",
      bodyDigest: bodyDigestHex(""),
      keyId: "12",
    };
    expect(callerSignatureBase(fields)).toBe(
      `sluice-caller-v1\n${canonicalString(fields)}\nnonce-0123456789abcdef`,
    );
  });

  it("accepts what signLockRequest signed, and says how long to remember the nonce", () => {
    expect(check(signed())).toEqual({
      valid: true,
      nonce: "nonce-0123456789abcdef",
      rememberMs: SKEW + 1,
    });
    // Signed 200 s ago: the same headers stay valid 100 s more.
    expect(check(signed({ timestamp: NOW - 200_000 }))).toMatchObject({ rememberMs: 100_001 });
  });

  it("draws a fresh nonce for every signature by default", () => {
    const a = signLockRequest({ secret: SECRET, keyId: 1, method: "POST", url: "/x" });
    const b = signLockRequest({ secret: SECRET, keyId: 1, method: "POST", url: "/x" });
    expect(a[REQUEST_SIGNATURE_HEADERS.nonce]).not.toBe(b[REQUEST_SIGNATURE_HEADERS.nonce]);
    expect(a[REQUEST_SIGNATURE_HEADERS.nonce]).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it.each([
    ["method", { method: "PUT" }],
    ["path", { pathAndQuery: "/pools/other/lock/acquire?x=1" }],
    ["query", { pathAndQuery: "/pools/llm/lock/acquire?x=2" }],
    ["body", { body: '{"waitMs":999}' }],
    ["key id", { keyId: "13" }],
    ["secret", { secret: "slc_req_another-keys-secret" }],
  ])("refuses a request whose %s differs from what was signed", (_what, overrides) => {
    expect(check(signed(), overrides)).toEqual({ valid: false, reason: "mismatch" });
  });

  it("refuses a changed timestamp or nonce header (both are signed)", () => {
    expect(check({ ...signed(), timestamp: String(NOW + 1) })).toEqual({
      valid: false,
      reason: "mismatch",
    });
    expect(check({ ...signed(), nonce: "nonce-0123456789abcdeX" })).toEqual({
      valid: false,
      reason: "mismatch",
    });
  });

  it("accepts a timestamp up to the skew away, either way, and refuses one beyond", () => {
    expect(check(signed({ timestamp: NOW - SKEW })).valid).toBe(true);
    expect(check(signed({ timestamp: NOW + SKEW })).valid).toBe(true);
    expect(check(signed({ timestamp: NOW - SKEW - 1 }))).toEqual({
      valid: false,
      reason: "stale_timestamp",
    });
    expect(check(signed({ timestamp: NOW + SKEW + 1 }))).toEqual({
      valid: false,
      reason: "stale_timestamp",
    });
    expect(check(signed({ timestamp: NOW - 60_000 }), { skewMs: 30_000 })).toEqual({
      valid: false,
      reason: "stale_timestamp",
    });
  });

  it("refuses missing and malformed headers", () => {
    expect(check({ ...signed(), signature: null })).toEqual({
      valid: false,
      reason: "missing_headers",
    });
    expect(check({ ...signed(), timestamp: "1.7e12" })).toEqual({
      valid: false,
      reason: "malformed_timestamp",
    });
    // Seconds where milliseconds belong: malformed, not merely stale, so the message says so.
    expect(check(signed({ timestamp: NOW / 1000 }), { now: NOW })).toEqual({
      valid: false,
      reason: "malformed_timestamp",
    });
    expect(check(signed({ nonce: "short" }))).toEqual({ valid: false, reason: "malformed_nonce" });
    expect(check(signed({ nonce: "has space 0123456789" }))).toEqual({
      valid: false,
      reason: "malformed_nonce",
    });
  });
});
