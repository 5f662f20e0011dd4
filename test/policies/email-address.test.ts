import { describe, expect, it } from "vitest";
import { identityAllowed } from "../../src/policies/claim-checks.js";
import { canonicalDomain, canonicalEmail } from "../../src/policies/email-address.js";

describe("e-mail addresses as a trusted-header policy compares them", () => {
  it("are UTF-8 local parts and IDN domains, the domain in its xn-- form", () => {
    expect(canonicalEmail("ada@acme.test")).toBe("ada@acme.test");
    expect(canonicalEmail("Jörg@Bücher.example")).toBe("jörg@xn--bcher-kva.example");
    expect(canonicalEmail("jörg@xn--bcher-kva.example")).toBe("jörg@xn--bcher-kva.example");
    // Decomposed ö (o + U+0308) is the same address as the composed one.
    expect(canonicalEmail("jo\u0308rg@bu\u0308cher.example")).toBe("jörg@xn--bcher-kva.example");
    expect(canonicalEmail("用户@例子.测试")).toBe("用户@xn--fsqu00a.xn--0zwm56d");
    expect(canonicalDomain("straße.example")).toBe("xn--strae-oqa.example");
  });

  it("are one address: no lists, controls, bidi overrides, spaces or look-alike spellings", () => {
    for (const text of [
      "eve@evil.test, ada@acme.test",
      "eve@evil.test ada@acme.test",
      "Ada <ada@acme.test>",
      "a@b@acme.test",
      "@acme.test",
      "ada@",
      "ada\u0000@acme.test",
      "ada\u0085@acme.test",
      "ada\u202e@acme.test",
      "ada\u00a0@acme.test",
      "ada@acme.test\u200b",
      "ada@ａｃｍｅ.test",
      "ada@acme。test",
      "ada@acme..test",
      "ada@xn--zz.test",
      "ada@acme_corp.test",
    ]) {
      expect(canonicalEmail(text), JSON.stringify(text)).toBeNull();
    }
  });

  it("match allow entries case aside, with a Unicode domain the same as its xn-- form", () => {
    expect(identityAllowed("jörg@bücher.example", ["@xn--bcher-kva.example"])).toBe(true);
    expect(identityAllowed("JÖRG@xn--bcher-kva.example", ["jörg@BÜCHER.example"])).toBe(true);
    expect(identityAllowed("eve@bücher.example", ["jörg@bücher.example"])).toBe(false);
    // "@domain" is that domain only, not its subdomains nor a name ending the same.
    expect(identityAllowed("ada@eu.bücher.example", ["@bücher.example"])).toBe(false);
    expect(identityAllowed("ada@xbücher.example", ["@bücher.example"])).toBe(false);
    expect(identityAllowed("ada@ｂücher.example", ["@bücher.example"])).toBe(false);
  });
});
