import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  bodyDigestHex,
  canonicalString,
  pathAndQueryOf,
  signRequest,
  verifySignature,
} from "../../src/signing/index.js";
import { createHarness, type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { poolRequest } from "./client.js";
import { TestUpstream } from "./upstream.js";

const SECRET = "slc_sig_test-secret";
const NOW = 1_700_000_000_000;

describe("origin signing helpers", () => {
  const signed = () =>
    signRequest({
      secret: SECRET,
      keyId: 7,
      method: "post",
      url: "/v1/chat?x=1",
      body: '{"a":1}',
      timestamp: NOW,
    });

  it("signs a canonical string of version, timestamp, method, path and query, body digest and key id", async () => {
    expect(
      canonicalString({
        timestamp: NOW,
        method: "post",
        pathAndQuery: "/v1/chat?x=1",
        bodyDigest: bodyDigestHex('{"a":1}'),
        keyId: "7",
      }),
    ).toBe(`v1\n${NOW}\nPOST\n/v1/chat?x=1\n${bodyDigestHex('{"a":1}')}\n7`);
    expect(bodyDigestHex(null)).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    expect(signed()["x-svc-signature"]).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("verifies a genuine request and refuses any tampering", async () => {
    const headers = signed();
    const request = {
      secret: SECRET,
      method: "POST",
      url: "/v1/chat?x=1",
      headers,
      body: '{"a":1}',
      now: NOW,
    };
    expect(verifySignature(request)).toEqual({ valid: true, keyId: "7", timestamp: NOW });
    expect(verifySignature({ ...request, body: '{"a":2}' })).toEqual({
      valid: false,
      reason: "mismatch",
    });
    expect(verifySignature({ ...request, url: "/v1/chat?x=2" })).toEqual({
      valid: false,
      reason: "mismatch",
    });
    expect(verifySignature({ ...request, method: "PUT" })).toEqual({
      valid: false,
      reason: "mismatch",
    });
    expect(verifySignature({ ...request, secret: "slc_sig_other" })).toEqual({
      valid: false,
      reason: "mismatch",
    });
    expect(
      verifySignature({ ...request, headers: { ...headers, "x-svc-signature-key-id": "8" } }),
    ).toEqual({
      valid: false,
      reason: "mismatch",
    });
  });

  it("refuses stale, malformed or missing signatures, and finds secrets by key id", async () => {
    const headers = signed();
    const base = { secret: SECRET, method: "POST", url: "/v1/chat?x=1", headers, body: '{"a":1}' };
    expect(verifySignature({ ...base, now: NOW + 300_001 })).toEqual({
      valid: false,
      reason: "stale_timestamp",
    });
    expect(verifySignature({ ...base, now: NOW + 10_000, toleranceMs: 5_000 }).valid).toBe(false);
    expect(
      verifySignature({
        ...base,
        now: NOW,
        headers: { ...headers, "x-svc-signature-timestamp": "soon" },
      }),
    ).toEqual({ valid: false, reason: "malformed_timestamp" });
    expect(verifySignature({ ...base, now: NOW, headers: {} })).toEqual({
      valid: false,
      reason: "missing_headers",
    });
    const lookup = (keyId: string) => (keyId === "7" ? SECRET : undefined);
    expect(verifySignature({ ...base, now: NOW, secret: lookup }).valid).toBe(true);
    expect(verifySignature({ ...base, now: NOW, secret: () => null })).toEqual({
      valid: false,
      reason: "unknown_key",
    });
    expect(verifySignature({ ...base, now: NOW, headers: new Headers(headers) }).valid).toBe(true);
  });

  it("refuses a signature dated too far in the future as well as too far in the past", async () => {
    // A timestamp ahead of the verifier's clock (a signer's clock running fast, or a
    // signature minted for later replay) is outside the window just the same.
    const base = {
      secret: SECRET,
      method: "POST",
      url: "/v1/chat?x=1",
      headers: signed(),
      body: '{"a":1}',
    };
    const refused = { valid: false, reason: "stale_timestamp" };
    expect(verifySignature({ ...base, now: NOW - 300_001 })).toEqual(refused);
    expect(verifySignature({ ...base, now: NOW - 10_000, toleranceMs: 5_000 })).toEqual(refused);
    // Up to the tolerance either way, the signature holds.
    expect(verifySignature({ ...base, now: NOW - 300_000 }).valid).toBe(true);
    expect(verifySignature({ ...base, now: NOW + 300_000 }).valid).toBe(true);
  });

  it("matches the worked example of docs/origin-signing.md", async () => {
    const headers = signRequest({
      secret: "slc_sig_example",
      keyId: 12,
      method: "POST",
      url: "/api/v1/chat?stream=false",
      body: '{"prompt":"hi"}',
      timestamp: 1_700_000_000_000,
    });
    expect(headers["x-svc-signature"]).toBe("08815Cjt3dQcYuNK6sqUWDsbPLX1-9qVTwZUC7F2pkk");
    expect(bodyDigestHex('{"prompt":"hi"}')).toBe(
      "14479f4e87d340fe0ca0d522d87a5b3a028ebb1af24fbb8d3ef4553044fc6db6",
    );
  });

  it("takes the path and query of a URL as sent, without normalising it", async () => {
    expect(pathAndQueryOf("http://origin.test/a/../b?x=%2F#frag")).toBe("/a/../b?x=%2F");
    expect(pathAndQueryOf("http://origin.test?x=1")).toBe("/?x=1");
    expect(pathAndQueryOf("/v1")).toBe("/v1");
  });
});

describe("pool proxy origin signing", () => {
  let h: Harness;
  let upstream: TestUpstream;

  beforeEach(async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({
      subdomain: "signed",
      origin: `${upstream.url}/api`,
      maxConcurrent: 2,
      originSigning: true,
    });
  });
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  it("signs each origin request with the key's secret; the exported helper verifies it", async () => {
    const minted = await h.mintKey("signed");
    expect(minted.signingSecret).toBeDefined();
    const reply = await poolRequest(h.proxy.port, {
      host: `signed.${POOL_DOMAIN}`,
      method: "POST",
      path: "/v1/chat?stream=false",
      headers: {
        "x-svc-key": minted.plaintext,
        "content-type": "application/json",
        // A caller cannot smuggle its own signature through.
        "x-svc-signature": "forged",
      },
      body: '{"prompt":"hello"}',
    });
    expect(reply.status).toBe(200);
    const seen = upstream.seen[0];
    if (!seen) throw new Error("the origin saw nothing");
    expect(seen.headers["x-svc-signature-key-id"]).toBe(String(minted.key.id));
    expect(seen.url).toBe("/api/v1/chat?stream=false");
    const verify = (body: Buffer | string) =>
      verifySignature({
        secret: minted.signingSecret as string,
        method: seen.method,
        url: seen.url,
        headers: seen.headers,
        body,
        now: h.clock.now(),
      });
    expect(verify(seen.body)).toEqual({
      valid: true,
      keyId: String(minted.key.id),
      timestamp: h.clock.now(),
    });
    expect(verify('{"prompt":"hellO"}')).toEqual({ valid: false, reason: "mismatch" });
  });

  it("refuses a signed pool's body over the limit with 413 before taking a slot", async () => {
    const minted = await h.mintKey("signed");
    const reply = await poolRequest(h.proxy.port, {
      host: `signed.${POOL_DOMAIN}`,
      method: "POST",
      path: "/upload",
      headers: { "x-svc-key": minted.plaintext },
      body: Buffer.alloc(10 * 1024 * 1024 + 1),
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "payload_too_large" });
    expect(upstream.hits).toBe(0);
    expect(await h.accessLog.list("signed")).toEqual([]);
  });
});
