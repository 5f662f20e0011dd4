import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";
import * as v from "valibot";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { planApply } from "../../adapters/cli/apply-plan.js";
import { ApplyFileSchema } from "../../adapters/cli/apply-schema.js";
import { createLockApp } from "../../adapters/hono/lock/create-lock-app.js";
import { SECRET_KEY_MESSAGE } from "../../src/policies/policy-inputs.js";
import { type CallerPolicies, CallerPoliciesSchema } from "../../src/policies/policy-schema.js";
import { signLockRequest } from "../../src/policies/request-signing.js";
import { type Listening, listen } from "../lock-api/harness.js";
import { type DashboardHarness, startDashboard } from "./harness.js";
import { renderedForm } from "./rendered-form.js";

const P = "callerPolicies";
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** The pool form's caller policies: shown, edited with apply's schema, enforced by the Lock API. */
describe("dashboard caller policies", () => {
  let d: DashboardHarness;
  let owner: string;
  let rsa: KeyPair;
  let jwk: JWK;

  beforeAll(async () => {
    rsa = await generateKeyPair("RS256", { extractable: true });
    jwk = { ...(await exportJWK(rsa.publicKey)), kid: "k1", alg: "RS256" };
  });
  beforeEach(async () => {
    d = await startDashboard({ socket: true });
    owner = await d.signInAs(d.acme.owner.id);
  });
  afterEach(async () => d.close());

  /** Opens the pool's form and posts it as rendered, with `changes`. */
  async function saveForm(pool: string, changes: Record<string, string | string[]>) {
    const opened = await d.request(`/pool/${pool}/edit`, { cookie: owner });
    expect(opened.status).toBe(200);
    await d.clock.advance(1_000);
    const form = renderedForm(opened.text, `/pool/${pool}/edit`, changes);
    return d.request(`/pool/${pool}/edit`, { cookie: owner, form });
  }
  const stored = async (pool: string) =>
    (await d.store.getPoolBySubdomain(d.acme.team.id, pool))!.callerPolicies;

  async function storePolicies(pool: "llm" | "open", callerPolicies: CallerPolicies) {
    const { id: _id, teamId, createdAt: _c, updatedAt: _u, ...input } = d.acme[pool];
    await d.store.upsertPool(teamId, { ...input, callerPolicies });
  }

  it("shows each policy on the pool page and in its form, and an unchanged save keeps them", async () => {
    const policies = v.parse(CallerPoliciesSchema, {
      ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"],
      hmac: { skewSeconds: 120 },
      jwt: {
        algorithms: ["RS256", "ES256"],
        issuer: "https://idp.example",
        audience: ["sluice-llm", "sluice-batch"],
        jwksUrl: "https://idp.example/jwks.json",
        requiredClaims: { sub: ["svc-a", "svc-b"], tier: [2] },
      },
      accessProxy: {
        preset: "trusted-header",
        trustedProxies: ["10.0.0.5/32"],
        allow: ["@acme.test"],
      },
    });
    await storePolicies("open", policies);
    const page = await d.request("/pool/open", { cookie: owner });
    expect(page.text).toContain("<b>IP allowlist:</b> 10.0.0.0/8, 2001:db8::/32");
    expect(page.text).toContain("<b>HMAC request signing:</b> on, window 120 s");
    expect(page.text).toContain(
      "<b>JWT:</b> issuer https://idp.example, audience sluice-llm, sluice-batch, algorithms RS256, ES256, in authorization, keys: JWKS URL https://idp.example/jwks.json, clock tolerance 30 s, required claims: sub in &quot;svc-a&quot;, &quot;svc-b&quot;; tier in 2",
    );
    expect(page.text).toContain(
      "<b>Access proxy:</b> trusted header x-auth-request-email from 10.0.0.5/32, allowing @acme.test",
    );
    // The page's curl lines say what the policies add, so a copied line is not simply refused.
    const curl = /<pre id="curl-lines"><code>([\s\S]*?)<\/code>/.exec(page.text)?.[1] ?? "";
    expect(curl).toContain("# Only callers in the pool&#39;s IP allowlist are admitted.");
    expect(curl).toContain("# Requests must come through the access proxy (trusted-header).");
    expect(curl).toContain("examples/signed-acquire.sh");
    expect(curl).toMatch(/lock\/acquire[^\n]* -H &quot;Authorization: Bearer \$JWT&quot;/);
    const llm = await d.request("/pool/llm", { cookie: owner });
    expect(llm.text).toContain("None: the pool key rule alone admits callers.");
    expect(llm.text).not.toContain("$JWT");

    const saved = await saveForm("open", { maxConcurrent: "3" });
    expect(saved.status).toBe(303);
    expect(await stored("open")).toEqual(policies);
    expect((await d.store.getPoolBySubdomain(d.acme.team.id, "open"))?.maxConcurrent).toBe(3);
  });

  it("sets every policy from the form as the apply file's schema reads them, and clears them", async () => {
    const opened = await d.request("/pool/llm/edit", { cookie: owner });
    const forged = await d.request("/pool/llm/edit", {
      cookie: owner,
      headers: { origin: "https://evil.test" },
      form: renderedForm(opened.text, "/pool/llm/edit", { [`${P}.ipAllowlist`]: "0.0.0.0/0" }),
    });
    expect(forged.status).toBe(403);
    expect(await stored("llm")).toBeNull();
    const saved = await saveForm("llm", {
      [`${P}.ipAllowlist`]: "10.0.0.0/8\n203.0.113.7, 2001:db8::/32",
      [`${P}.hmac`]: "on",
      [`${P}.hmac.skewSeconds`]: "",
      [`${P}.jwt`]: "on",
      [`${P}.jwt.algorithms`]: ["RS256", "PS256"],
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "sluice-llm",
      [`${P}.jwt.requiredClaims`]: '{"sub": ["svc-a", "svc-b"], "admin": [true]}',
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [jwk] }),
      [`${P}.accessProxy.preset`]: "cloudflare-access",
      [`${P}.accessProxy.teamDomain`]: "Acme.cloudflareaccess.com",
      [`${P}.accessProxy.audience`]: "aud-tag",
    });
    expect(saved.status).toBe(303);
    // The same object an apply file with these settings stores (defaults filled in).
    expect(await stored("llm")).toEqual(
      v.parse(CallerPoliciesSchema, {
        ipAllowlist: ["10.0.0.0/8", "203.0.113.7", "2001:db8::/32"],
        hmac: {},
        jwt: {
          algorithms: ["RS256", "PS256"],
          issuer: "https://idp.example",
          audience: "sluice-llm",
          requiredClaims: { sub: ["svc-a", "svc-b"], admin: [true] },
          jwks: { keys: [jwk] },
        },
        accessProxy: {
          preset: "cloudflare-access",
          teamDomain: "acme.cloudflareaccess.com",
          audience: "aud-tag",
        },
      }),
    );
    const cleared = await saveForm("llm", {
      [`${P}.ipAllowlist`]: "",
      [`${P}.hmac`]: "",
      [`${P}.jwt`]: "",
      [`${P}.accessProxy.preset`]: "",
    });
    expect(cleared.status).toBe(303);
    expect(await stored("llm")).toBeNull();
  });

  it("shows bad settings as errors next to their fields, keeps what was typed, and stores nothing", async () => {
    const { d: _private, ...publicPart } = {
      ...(await exportJWK(rsa.privateKey)),
      kid: "k1",
    } as JWK;
    const bad = await saveForm("llm", {
      [`${P}.ipAllowlist`]: "10.0.0.0/33",
      [`${P}.hmac`]: "on",
      [`${P}.hmac.skewSeconds`]: "9999",
      [`${P}.jwt`]: "on",
      [`${P}.jwt.algorithms`]: [],
      [`${P}.jwt.issuer`]: " ",
      [`${P}.jwt.audience`]: "sluice-llm",
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [{ ...publicPart, d: "private" }] }),
      [`${P}.jwt.requiredClaims`]: "sub: no JSON here",
      [`${P}.accessProxy.preset`]: "trusted-header",
      [`${P}.accessProxy.trustedProxies`]: "",
    });
    expect(bad.status).toBe(422);
    const error = (field: string) =>
      new RegExp(`id="error-${P}\\.${field.replace(".", "\\.")}">([^<]*)<`).exec(bad.text)?.[1];
    expect(error("ipAllowlist")).toMatch(/10\.0\.0\.0\/33/);
    expect(error("hmac.skewSeconds")).toBe("At most 3600 (an hour).");
    expect(error("jwt.algorithms")).toBe("List at least one algorithm.");
    expect(error("jwt.issuer")).toBe("Required.");
    expect(error("jwt.jwks")).toBe(SECRET_KEY_MESSAGE);
    expect(error("jwt.requiredClaims")).toBe(
      "Must be a JSON object of claims and allowed values, such as {&quot;sub&quot;: [&quot;svc-a&quot;]}.",
    );
    // The trusted-header preset is refused without its proxies, as `sluice apply` refuses it.
    expect(error("accessProxy.trustedProxies")).toBe(
      "A trusted-header policy needs the proxy&#39;s addresses: list them in trustedProxies.",
    );
    expect(bad.text).toContain(">10.0.0.0/33</textarea>");
    expect(await stored("llm")).toBeNull();

    const twoSources = await saveForm("llm", {
      [`${P}.jwt`]: "on",
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "a",
      [`${P}.jwt.jwks`]: "{not json",
      [`${P}.jwt.jwksUrl`]: "http://idp.example/jwks",
      [`${P}.accessProxy.preset`]: "cloudflare-access",
      [`${P}.accessProxy.teamDomain`]: "not a domain",
    });
    expect(twoSources.status).toBe(422);
    expect(twoSources.text).toMatch(/id="error-callerPolicies\.jwt\.jwks">Must be JSON/);
    expect(twoSources.text).toMatch(
      /id="error-callerPolicies\.jwt\.jwksUrl">Must be an https:\/\/ URL/,
    );
    expect(twoSources.text).toMatch(
      /id="error-callerPolicies\.accessProxy\.teamDomain">Must be your team domain/,
    );
    const oneTooMany = await saveForm("llm", {
      [`${P}.jwt`]: "on",
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "a",
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [jwk] }),
      [`${P}.jwt.jwksUrl`]: "https://idp.example/jwks",
    });
    expect(oneTooMany.text).toMatch(
      /id="error-callerPolicies\.jwt\.keys">Give exactly one of jwks \(pasted\), publicKey \(PEM\) or jwksUrl\./,
    );
    expect(await stored("llm")).toBeNull();
  });

  it("round-trips required claims exactly: an unchanged save of an applied pool is no change to apply", async () => {
    const jwt = {
      algorithms: ["RS256"],
      issuer: "https://idp.example",
      audience: "sluice-claims",
      jwks: { keys: [jwk] },
      // Text that reads like a number or a list, and a boolean's text: each must stay as typed.
      requiredClaims: { sub: ["123", "svc, batch"], admin: ["true"], tier: [2, true] },
    };
    const file = v.parse(ApplyFileSchema, {
      team: "acme",
      pools: [
        {
          name: "Claims",
          subdomain: "claims",
          origin: "http://127.0.0.1:9000/",
          maxConcurrent: 2,
          callerPolicies: { jwt },
        },
      ],
    });
    const plan = () => planApply(d.catalog, file, { env: {}, prune: false });
    await (await plan()).execute();
    expect((await plan()).changes.map((change) => change.action)).toEqual(["unchanged"]);
    const saved = await saveForm("claims", {});
    expect(saved.status).toBe(303);
    expect((await stored("claims"))?.jwt?.requiredClaims).toEqual(jwt.requiredClaims);
    expect((await d.request("/pool/claims", { cookie: owner })).text).toContain(
      "required claims: sub in &quot;123&quot;, &quot;svc, batch&quot;; admin in &quot;true&quot;; tier in 2, true",
    );
    expect((await plan()).changes.map((change) => change.action)).toEqual(["unchanged"]);

    // Typed in the form as JSON: a name given twice or one a reader drops is an error there.
    const twice = await saveForm("claims", {
      [`${P}.jwt.requiredClaims`]: '{"sub": ["svc-a"], "sub": ["svc-b"]}',
    });
    expect(twice.status).toBe(422);
    expect(twice.text).toContain(
      'id="error-callerPolicies.jwt.requiredClaims">sub is given twice: give each name once.<',
    );
    const proto = await saveForm("claims", {
      [`${P}.jwt.requiredClaims`]: '{"__proto__": ["svc-a"]}',
    });
    expect(proto.status).toBe(422);
    expect(proto.text).toContain(
      'id="error-callerPolicies.jwt.requiredClaims">__proto__ cannot be a claim name here',
    );
    expect((await stored("claims"))?.jwt?.requiredClaims).toEqual(jwt.requiredClaims);
  });

  it("keeps a PEM key as applied when a browser sends the form back with CRLF line breaks", async () => {
    const publicKey = (await exportSPKI(rsa.publicKey)).trim();
    const jwt = { algorithms: ["RS256"], issuer: "https://idp.example", audience: "a", publicKey };
    const file = v.parse(ApplyFileSchema, {
      team: "acme",
      pools: [
        {
          name: "Pem",
          subdomain: "pem",
          origin: "http://127.0.0.1:9000/",
          maxConcurrent: 2,
          callerPolicies: { jwt },
        },
      ],
    });
    const plan = () => planApply(d.catalog, file, { env: {}, prune: false });
    await (await plan()).execute();
    const opened = await d.request("/pool/pem/edit", { cookie: owner });
    await d.clock.advance(1_000);
    // HTML form submission turns every line break of a textarea into CRLF.
    const form = Object.fromEntries(
      Object.entries(renderedForm(opened.text, "/pool/pem/edit")).map(([name, value]) => [
        name,
        Array.isArray(value) ? value : value.replace(/\r?\n/g, "\r\n"),
      ]),
    );
    expect(String(form[`${P}.jwt.publicKey`])).toContain("\r\n");
    expect((await d.request("/pool/pem/edit", { cookie: owner, form })).status).toBe(303);
    expect((await stored("pem"))?.jwt?.publicKey).toBe(publicKey);
    expect((await plan()).changes.map((change) => change.action)).toEqual(["unchanged"]);
    // A file written with CRLF line breaks is the same key too.
    const crlf = v.parse(ApplyFileSchema, {
      team: "acme",
      pools: [
        {
          ...file.pools[0],
          callerPolicies: { jwt: { ...jwt, publicKey: publicKey.replace(/\n/g, "\r\n") } },
        },
      ],
    });
    const again = await planApply(d.catalog, crlf, { env: {}, prune: false });
    expect(again.changes.map((change) => change.action)).toEqual(["unchanged"]);
  });

  it("refuses a private PEM or a secret JWK next to its field, and never shows it back", async () => {
    const privatePem = (await exportPKCS8(rsa.privateKey)).trim();
    const symmetric = JSON.stringify({
      keys: [{ kty: "oct", k: "c3ltbWV0cmljLXNlY3JldC12YWx1ZQ" }],
    });
    const privateJwk = JSON.stringify({
      keys: [{ ...(await exportJWK(rsa.privateKey)), kid: "k1" }],
    });
    const bad = await saveForm("llm", {
      [`${P}.jwt`]: "on",
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "a",
      [`${P}.jwt.publicKey`]: privatePem,
      [`${P}.accessProxy.preset`]: "google-iap",
      [`${P}.accessProxy.audience`]: "/projects/1/apps/p",
      [`${P}.accessProxy.jwks`]: symmetric,
    });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain(
      `id="error-callerPolicies.jwt.publicKey">Only public keys belong here`,
    );
    expect(bad.text).toContain(
      `id="error-callerPolicies.accessProxy.jwks">Only public keys belong here`,
    );
    expect(bad.text).not.toContain("PRIVATE KEY-----");
    expect(bad.text).not.toContain("c3ltbWV0cmljLXNlY3JldC12YWx1ZQ");
    // What else was typed stays.
    expect(bad.text).toContain('value="https://idp.example"');
    const jwkPage = await saveForm("llm", {
      [`${P}.jwt`]: "on",
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "a",
      [`${P}.jwt.jwks`]: privateJwk,
    });
    expect(jwkPage.status).toBe(422);
    expect(jwkPage.text).not.toContain(JSON.parse(privateJwk).keys[0].d);
    expect(await stored("llm")).toBeNull();
  });

  it("refuses keys no token could ever be verified with, next to their field", async () => {
    const ec = await generateKeyPair("ES256", { extractable: true });
    const ecJwk = { ...(await exportJWK(ec.publicKey)), kid: "e1" };
    const jwt = {
      [`${P}.jwt`]: "on",
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "a",
      [`${P}.jwt.algorithms`]: ["RS256"],
    };
    const error = (text: string, field: string) =>
      new RegExp(`id="error-${P}\\.${field.replace(".", "\\.")}">([^<]*)<`).exec(text)?.[1];
    // A PEM whose armour is right but whose body is no key (a bad copy).
    const garbled = await saveForm("llm", {
      ...jwt,
      [`${P}.jwt.publicKey`]: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
    });
    expect(garbled.status).toBe(422);
    expect(error(garbled.text, "jwt.publicKey")).toBe(
      "This PEM holds no public key Node can read: check that it was pasted whole.",
    );
    // An RSA JWK whose modulus was cut, and an EC key set for a policy that allows RS256 only.
    const cut = await saveForm("llm", {
      ...jwt,
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [{ ...jwk, n: "AQAB" }] }),
    });
    expect(error(cut.text, "jwt.jwks")).toMatch(
      /^Key 1 of the set \(keys\[0\]\) is an RSA key of 17 bits/,
    );
    const otherType = await saveForm("llm", {
      ...jwt,
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [ecJwk] }),
      [`${P}.accessProxy.preset`]: "cloudflare-access",
      [`${P}.accessProxy.teamDomain`]: "acme.cloudflareaccess.com",
      [`${P}.accessProxy.audience`]: "aud",
      [`${P}.accessProxy.jwks`]: JSON.stringify({ keys: [ecJwk] }),
    });
    expect(otherType.status).toBe(422);
    expect(error(otherType.text, "jwt.jwks")).toMatch(
      /^No key here verifies RS256: this is an EC P-256 key \(for ES256\)/,
    );
    // Cloudflare Access signs with RS256 whatever the form says.
    expect(error(otherType.text, "accessProxy.jwks")).toMatch(/^No key here verifies RS256/);
    expect(await stored("llm")).toBeNull();
    // The same key set is taken once the algorithm it signs with is listed.
    const fixed = await saveForm("llm", {
      ...jwt,
      [`${P}.jwt.algorithms`]: ["RS256", "ES256"],
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [ecJwk] }),
    });
    expect(fixed.status).toBe(303);
    expect((await stored("llm"))?.jwt?.jwks).toEqual({ keys: [ecJwk] });
  });

  it("refuses a trusted-header preset that would believe the header from any client", async () => {
    const preset = {
      [`${P}.accessProxy.preset`]: "trusted-header",
      [`${P}.accessProxy.header`]: "x-auth-request-email",
    };
    for (const broad of ["0.0.0.0/0", "::/0", "::ffff:0:0/96"]) {
      const saved = await saveForm("llm", {
        ...preset,
        [`${P}.accessProxy.trustedProxies`]: `10.0.0.5/32\n${broad}`,
      });
      expect(saved.status, broad).toBe(422);
      expect(saved.text).toContain(
        `id="error-${P}.accessProxy.trustedProxies">${broad} is wider than a /8 (IPv4) or /16 (IPv6): any client there could send the header and name any identity.`,
      );
    }
    expect(await stored("llm")).toBeNull();
    const narrow = await saveForm("llm", {
      ...preset,
      [`${P}.accessProxy.trustedProxies`]: "10.0.0.0/8\n2001:db8::/32",
    });
    expect(narrow.status).toBe(303);
    expect((await stored("llm"))?.accessProxy).toMatchObject({
      trustedProxies: ["10.0.0.0/8", "2001:db8::/32"],
    });
  });

  it("never shows a stored key set URL's user, password or query, and keeps its query on save", async () => {
    const policies = v.parse(CallerPoliciesSchema, {
      jwt: {
        algorithms: ["RS256"],
        issuer: "https://idp.example",
        audience: "sluice-open",
        jwksUrl: "https://idp.example/jwks.json?token=q-secret-123",
      },
    });
    // Older settings, from before URLs with credentials were refused.
    policies.jwt!.jwksUrl = "https://svc:pw-secret-456@idp.example/jwks.json?token=q-secret-123";
    await storePolicies("open", policies);
    const pages = [
      (await d.request("/pool/open", { cookie: owner })).text,
      (await d.request("/pool/open/edit", { cookie: owner })).text,
    ];
    expect(pages[0]).toContain("keys: JWKS URL https://idp.example/jwks.json?…,");
    for (const text of pages) {
      expect(text).not.toContain("pw-secret-456");
      expect(text).not.toContain("q-secret-123");
    }
    expect((await saveForm("open", {})).status).toBe(303);
    expect((await stored("open"))?.jwt?.jwksUrl).toBe(
      "https://idp.example/jwks.json?token=q-secret-123",
    );
    const typed = await saveForm("open", {
      [`${P}.jwt.jwksUrl`]: "https://svc:pw@idp.example/other#keys",
    });
    expect(typed.status).toBe(422);
    expect(typed.text).toMatch(
      /id="error-callerPolicies\.jwt\.jwksUrl">Must not hold a user or password/,
    );
  });

  it("refuses a token header Sluice owns and an allow entry that is no address, next to their fields", async () => {
    const bad = await saveForm("llm", {
      [`${P}.jwt`]: "on",
      [`${P}.jwt.header`]: "X-Svc-Key",
      [`${P}.jwt.issuer`]: "https://idp.example",
      [`${P}.jwt.audience`]: "a",
      [`${P}.jwt.jwks`]: JSON.stringify({ keys: [jwk] }),
      [`${P}.accessProxy.preset`]: "trusted-header",
      [`${P}.accessProxy.trustedProxies`]: "10.0.0.5/32",
      [`${P}.accessProxy.allow`]: "@acme.test\n<script>",
    });
    expect(bad.status).toBe(422);
    expect(bad.text).toMatch(
      /id="error-callerPolicies\.jwt\.header">x-svc-key is Sluice&#39;s own header/,
    );
    expect(bad.text).toContain(
      'id="error-callerPolicies.accessProxy.allow">Must be an e-mail address (ada@acme.test) or an @domain (@acme.test).<',
    );
    expect(await stored("llm")).toBeNull();
  });

  it("shows no secret in any page: the credential, the key and its secrets appear once, when minted", async () => {
    const saved = await saveForm("llm", {
      [`${P}.hmac`]: "on",
      originSigning: "on",
      credentialAction: "replace",
      credentialHeader: "x-api-key",
      credentialValue: "sk-live-upstream-credential",
    });
    expect(saved.status).toBe(303);
    const minted = await d.request("/pool/llm/keys", {
      cookie: owner,
      form: { label: "ci", access: "write", expires_preset: "none" },
    });
    const secrets = [
      "sk-live-upstream-credential",
      /id="minted-key">([^<]+)</.exec(minted.text)![1]!,
      /id="minted-signing-secret">([^<]+)</.exec(minted.text)![1]!,
      /id="minted-request-secret">([^<]+)</.exec(minted.text)![1]!,
    ];
    expect(secrets[3]).toMatch(/^slc_req_/);
    const pages = ["/", "/pool/llm", "/pool/llm/edit", "/pool/llm/live", "/pool/llm/series"];
    const bad = await saveForm("llm", { [`${P}.hmac.skewSeconds`]: "x" });
    expect(bad.status).toBe(422);
    const texts = [bad.text];
    for (const path of pages) texts.push((await d.request(path, { cookie: owner })).text);
    for (const text of texts) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });

  describe("set in the form, enforced by the Lock API", () => {
    let lock: Listening;
    beforeEach(async () => {
      lock = await listen(
        createLockApp({
          governor: d.governor,
          catalog: d.catalog,
          logError: (error) => {
            throw error;
          },
        }).fetch,
      );
    });
    afterEach(async () => lock.close());

    async function acquire(key: string, headers: Record<string, string> = {}) {
      const response = await fetch(`${lock.url}/pools/llm/lock/acquire`, {
        method: "POST",
        headers: { "x-svc-key": key, ...headers },
      });
      const body = (await response.json()) as { slotId?: string; error?: string };
      if (body.slotId) await d.governor.release("llm", body.slotId);
      return { status: response.status, body };
    }
    async function mint() {
      const minted = await d.request("/pool/llm/keys", {
        cookie: owner,
        form: { label: "", access: "write", expires_preset: "none" },
      });
      return {
        key: /id="minted-key">([^<]+)</.exec(minted.text)![1]!,
        id: /Request-signing secret \(key id (\d+)\)/.exec(minted.text)?.[1],
        secret: /id="minted-request-secret">([^<]+)</.exec(minted.text)?.[1],
      };
    }

    it("an IP allowlist, then signed requests, then a JWT", async () => {
      const plain = await mint();
      expect((await acquire(plain.key)).status).toBe(200);

      expect((await saveForm("llm", { [`${P}.ipAllowlist`]: "203.0.113.0/24" })).status).toBe(303);
      expect(await acquire(plain.key)).toEqual({
        status: 403,
        body: {
          error: "unauthorized",
          message: "Your address is not in this pool's IP allowlist.",
        },
      });
      const local = "127.0.0.0/8\n::1/128";
      expect((await saveForm("llm", { [`${P}.ipAllowlist`]: local })).status).toBe(303);
      expect((await acquire(plain.key)).status).toBe(200);

      expect((await saveForm("llm", { [`${P}.hmac`]: "on" })).status).toBe(303);
      expect((await acquire(plain.key)).status).toBe(401);
      const signed = await mint();
      const sign = () =>
        signLockRequest({
          secret: signed.secret!,
          keyId: signed.id!,
          method: "POST",
          url: "/pools/llm/lock/acquire",
          timestamp: d.clock.now(),
        });
      expect((await acquire(signed.key)).status).toBe(401);
      expect((await acquire(signed.key, sign())).status).toBe(200);

      expect(
        (
          await saveForm("llm", {
            [`${P}.hmac`]: "",
            [`${P}.jwt`]: "on",
            [`${P}.jwt.header`]: "x-caller-token",
            [`${P}.jwt.algorithms`]: "RS256",
            [`${P}.jwt.issuer`]: "https://idp.example",
            [`${P}.jwt.audience`]: "sluice-llm",
            [`${P}.jwt.jwks`]: JSON.stringify({ keys: [jwk] }),
          })
        ).status,
      ).toBe(303);
      const token = (aud: string) =>
        new SignJWT({ sub: "svc-a", iss: "https://idp.example", aud })
          .setProtectedHeader({ alg: "RS256", kid: "k1" })
          .setExpirationTime(Math.floor(d.clock.now() / 1000) + 300)
          .sign(rsa.privateKey);
      expect((await acquire(plain.key)).status).toBe(401);
      const wrong = await acquire(plain.key, { "x-caller-token": await token("another") });
      expect(wrong.status).toBe(401);
      const right = await acquire(plain.key, { "x-caller-token": await token("sluice-llm") });
      expect(right.status).toBe(200);
    });
  });
});
