import { afterEach, describe, expect, it } from "vitest";
import { broadTrustedProxies } from "../../adapters/server/broad-trusted-proxies.js";
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

  it("make sluice serve warn at start that X-Forwarded-For can then be spoofed", {
    timeout: 60_000,
  }, async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    server = startSluice(
      ["serve", "--port", "0", "--trusted-proxies", "10.0.0.0/8,0.0.0.0/0"],
      env,
    );
    await server.waitFor(/Listening on/);
    expect(server.stderr()).toContain(
      "--trusted-proxies 0.0.0.0/0 trusts a network wider than a /8 (IPv4) or /16 (IPv6): any client there can send an X-Forwarded-For naming any address",
    );
    await server.stop();
    server = startSluice(["serve", "--port", "0", "--trusted-proxies", "10.0.0.0/8"], env);
    await server.waitFor(/Listening on/);
    expect(server.stderr()).not.toContain("--trusted-proxies");
  });
});
