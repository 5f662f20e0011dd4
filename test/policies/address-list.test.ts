import { describe, expect, it } from "vitest";
import { AddressList, cidrIssue, normalizeAddress } from "../../src/policies/address-list.js";
import { clientAddress } from "../../src/policies/client-address.js";

describe("AddressList (CIDR match)", () => {
  const list = AddressList.parse(["10.0.0.0/8", "203.0.113.7", "2001:db8::/32"]);

  it("matches IPv4 ranges and single addresses, and nothing outside them", () => {
    expect(list.has("10.255.0.1")).toBe(true);
    expect(list.has("203.0.113.7")).toBe(true);
    expect(list.has("203.0.113.8")).toBe(false);
    expect(list.has("11.0.0.1")).toBe(false);
  });

  it("matches IPv6 ranges, in any spelling", () => {
    expect(list.has("2001:db8::1")).toBe(true);
    expect(list.has("2001:DB8:0:0:0:0:0:1")).toBe(true);
    expect(list.has("2001:db9::1")).toBe(false);
    expect(list.has("fe80::1%eth0")).toBe(false);
  });

  it("matches an IPv4-mapped IPv6 address (a dual-stack socket's IPv4 peer) against IPv4 ranges", () => {
    expect(list.has("::ffff:10.1.2.3")).toBe(true);
    expect(list.has("::ffff:11.1.2.3")).toBe(false);
  });

  it("matches an IPv4 address against a mapped IPv6 range", () => {
    const mapped = AddressList.parse(["::ffff:192.0.2.0/120"]);
    expect(mapped.has("192.0.2.9")).toBe(true);
    expect(mapped.has("192.0.3.9")).toBe(false);
  });

  it("never matches no address or text that is no address", () => {
    expect(list.has(null)).toBe(false);
    expect(list.has("example.com")).toBe(false);
    expect(list.has("")).toBe(false);
  });

  it("refuses entries that are no CIDR, naming them", () => {
    for (const bad of [
      "10.0.0.0/33",
      "10.0.0/8",
      "2001:db8::/129",
      "host.example",
      "10.0.0.0/-1",
      "1.2.3.4/",
    ]) {
      expect(cidrIssue(bad), bad).toMatch(/is not an IP address or CIDR/);
      expect(() => AddressList.parse([bad])).toThrow(TypeError);
    }
    expect(cidrIssue("::/0")).toBeNull();
  });

  it("normalises mapped addresses and zones", () => {
    expect(normalizeAddress("::FFFF:10.0.0.7")).toBe("10.0.0.7");
    expect(normalizeAddress("FE80::1%eth0")).toBe("fe80::1");
  });
});

describe("clientAddress (X-Forwarded-For through trusted proxies)", () => {
  const trusted = AddressList.parse(["10.0.0.0/8", "fd00::/8"]);

  it("is the socket's peer when no proxy is trusted, whatever the header says", () => {
    expect(clientAddress("192.0.2.1", "203.0.113.7", null)).toBe("192.0.2.1");
  });

  it("ignores the header of an untrusted peer (a spoofed X-Forwarded-For)", () => {
    expect(clientAddress("192.0.2.1", "203.0.113.7", trusted)).toBe("192.0.2.1");
  });

  it("takes hops from the right while each is a trusted proxy", () => {
    expect(clientAddress("10.0.0.2", "203.0.113.7", trusted)).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.2", "203.0.113.7, 10.0.0.3", trusted)).toBe("203.0.113.7");
    expect(clientAddress("::ffff:10.0.0.2", "2001:db8::5,fd00::1", trusted)).toBe("2001:db8::5");
  });

  it("stops at the first untrusted hop: addresses left of it are the caller's own claims", () => {
    expect(clientAddress("10.0.0.2", "10.9.9.9, 198.51.100.1", trusted)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.2", "203.0.113.7, 198.51.100.1", trusted)).toBe("198.51.100.1");
  });

  it("stops at a hop that is no address, at the proxy that wrote it", () => {
    expect(clientAddress("10.0.0.2", "203.0.113.7, unknown", trusted)).toBe("10.0.0.2");
  });

  it("reads a hop written with a port as its address (some load balancers write ip:port)", () => {
    expect(clientAddress("10.0.0.2", "203.0.113.7:5555", trusted)).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.2", "[2001:db8::5]:443", trusted)).toBe("2001:db8::5");
    expect(clientAddress("10.0.0.2", "[2001:db8::5]", trusted)).toBe("2001:db8::5");
    expect(clientAddress("10.0.0.2", "198.51.100.1, 10.0.0.3:80", trusted)).toBe("198.51.100.1");
    // Still no address: a port on a name.
    expect(clientAddress("10.0.0.2", "host.example:80", trusted)).toBe("10.0.0.2");
  });

  it("is the last trusted proxy when the header runs out", () => {
    expect(clientAddress("10.0.0.2", "10.0.0.3", trusted)).toBe("10.0.0.3");
    expect(clientAddress("10.0.0.2", null, trusted)).toBe("10.0.0.2");
  });

  it("is null when the socket address is unknown", () => {
    expect(clientAddress(null, "203.0.113.7", trusted)).toBeNull();
  });
});
