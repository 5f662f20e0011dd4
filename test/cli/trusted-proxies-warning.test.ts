import { afterEach, describe, expect, it } from "vitest";
import {
  broadTrustedProxies,
  trustedProxiesWarning,
  trustedProxyWidth,
} from "../../adapters/server/broad-trusted-proxies.js";
import { cliEnv, type RunningSluice, startSluice, tempDir } from "./cli-process.js";

describe("--trusted-proxies wider than a /8 (IPv4) or /16 (IPv6)", () => {
  const { dir, cleanup } = tempDir();
  let server: RunningSluice | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    cleanup();
  });

  it("are the networks any client may be in", () => {
    expect(
      broadTrustedProxies([
        "0.0.0.0/0",
        "::/0",
        "10.0.0.0/7",
        "10.0.0.0/8",
        "192.168.1.7",
        "2001:db8::/15",
        "2001:db8::/16",
        "fd00::1",
      ]),
    ).toEqual(["0.0.0.0/0", "::/0", "10.0.0.0/7", "2001:db8::/15"]);
  });

  it("judge an IPv4-mapped IPv6 range by the IPv4 addresses it holds", () => {
    expect(trustedProxyWidth("::ffff:10.0.0.0/104")).toEqual({ family: "ipv4", prefix: 8 });
    expect(trustedProxyWidth("::ffff:a00:0/103")).toEqual({ family: "ipv4", prefix: 7 });
    expect(trustedProxyWidth("::FFFF:0:0/96")).toEqual({ family: "ipv4", prefix: 0 });
    expect(trustedProxyWidth("::ffff:10.0.0.7")).toEqual({ family: "ipv4", prefix: 32 });
    // Holding all of ::ffff:0:0/96 is trusting every IPv4 client.
    expect(trustedProxyWidth("::/80")).toEqual({ family: "ipv4", prefix: 0 });
    expect(trustedProxyWidth("::/0")).toEqual({ family: "ipv4", prefix: 0 });
    expect(trustedProxyWidth("::/81")).toEqual({ family: "ipv6", prefix: 81 });
    expect(trustedProxyWidth("2001:db8::/32")).toEqual({ family: "ipv6", prefix: 32 });
    expect(trustedProxyWidth("10.0.0.0/8")).toEqual({ family: "ipv4", prefix: 8 });
    expect(
      broadTrustedProxies([
        "::ffff:0:0/96",
        "::ffff:0.0.0.0/96",
        "::ffff:10.0.0.0/104",
        "::ffff:10.0.0.0/103",
        "::/80",
        "::ffff:192.168.0.0/112",
        "fe80::/16",
      ]),
    ).toEqual(["::ffff:0:0/96", "::ffff:0.0.0.0/96", "::ffff:10.0.0.0/103", "::/80"]);
    expect(trustedProxiesWarning(["::ffff:0:0/96"])).toContain(
      "--trusted-proxies ::ffff:0:0/96 trusts a network wider than a /8 (IPv4) or /16 (IPv6)",
    );
    expect(trustedProxiesWarning(["::ffff:0:0/96"])).toContain("IPv4-mapped");
    expect(trustedProxiesWarning(["::/0", "0.0.0.0/0"])).toContain(
      "--trusted-proxies ::/0, 0.0.0.0/0 trusts networks wider",
    );
    expect(trustedProxiesWarning(["::/0"])).not.toContain("IPv4-mapped");
    expect(trustedProxiesWarning(["::ffff:10.0.0.0/104", "10.0.0.0/8"])).toBeNull();
  });

  it("make sluice serve warn at start that X-Forwarded-For can then be spoofed", {
    timeout: 60_000,
  }, async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    server = startSluice(
      ["serve", "--port", "0", "--trusted-proxies", "10.0.0.0/8,0.0.0.0/0,::ffff:0:0/96"],
      env,
    );
    await server.waitFor(/Listening on/);
    expect(server.stderr()).toContain(
      "--trusted-proxies 0.0.0.0/0, ::ffff:0:0/96 trusts networks wider than a /8 (IPv4) or /16 (IPv6): any client there can send an X-Forwarded-For naming any address",
    );
    await server.stop();
    server = startSluice(["serve", "--port", "0", "--trusted-proxies", "10.0.0.0/8"], env);
    await server.waitFor(/Listening on/);
    expect(server.stderr()).not.toContain("--trusted-proxies");
  });
});
