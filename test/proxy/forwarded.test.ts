import { describe, expect, it } from "vitest";
import { forwardedWithHop } from "../../adapters/hono/proxy/forwarded.js";

describe("forwardedWithHop (RFC 7239)", () => {
  it("brackets and quotes an IPv6 address, quotes a host with a port", () => {
    expect(
      forwardedWithHop(null, { remoteAddress: "::1", host: "llm.pools.test:8080", proto: "https" }),
    ).toBe('for="[::1]";host="llm.pools.test:8080";proto=https');
  });

  it("appends to the caller's elements, and leaves out what it does not know", () => {
    expect(
      forwardedWithHop('for="_hidden"', { remoteAddress: null, host: null, proto: "http" }),
    ).toBe('for="_hidden", proto=http');
  });

  it("escapes a quote or backslash a caller put in its Host", () => {
    expect(forwardedWithHop(null, { remoteAddress: null, host: 'a"b\\c', proto: "http" })).toBe(
      'host="a\\"b\\\\c";proto=http',
    );
  });
});
