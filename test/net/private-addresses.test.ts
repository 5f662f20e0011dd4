import { describe, expect, it } from "vitest";
import { isPrivateAddress, isPrivateLiteralHost } from "../../adapters/net/private-addresses.js";

describe("private addresses", () => {
  it("counts every IPv6 spelling of an IPv4 address as that address", () => {
    for (const address of [
      "::ffff:7f00:1",
      "::ffff:a9fe:a9fe",
      "0:0:0:0:0:ffff:a00:1",
      // IPv4-compatible (deprecated) and IPv4-translated forms, and NAT64.
      "::7f00:1",
      "::ffff:0:7f00:1",
      "64:ff9b::a9fe:a9fe",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    expect(isPrivateAddress("::ffff:808:808")).toBe(false);
    expect(isPrivateAddress("not-an-address")).toBe(true);
  });

  it("checks a URL's host only when it is an address literal, however it was spelled", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://0x7f.1/",
      "https://2130706433/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://169.254.169.254/",
    ]) {
      expect(isPrivateLiteralHost(new URL(url).hostname), url).toBe(true);
    }
    for (const url of ["https://idp.example/", "https://localhost/", "https://1.1.1.1/"]) {
      // A name is checked when connecting, by the addresses it resolves to.
      expect(isPrivateLiteralHost(new URL(url).hostname), url).toBe(false);
    }
  });
});
