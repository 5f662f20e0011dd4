import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cliEnv, type RunningSluice, runSluice, startSluice, tempDir } from "./cli-process.js";

describe("sluice serve --jwks-network (real processes)", () => {
  const { dir, cleanup } = tempDir();
  let server: RunningSluice | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(cleanup);

  it("is listed in sluice serve --help with its values", async () => {
    const { code, stdout } = await runSluice(["serve", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--jwks-network public\|private\s+Where JWT and access-proxy/);
  });

  it("accepts private, and from SLUICE_JWKS_NETWORK too", { timeout: 60_000 }, async () => {
    server = startSluice(
      ["serve", "--port", "0", "--jwks-network", "private"],
      cliEnv({ SLUICE_DATA_DIR: dir }),
    );
    await server.waitFor(/Listening on/);
    await server.stop();
    server = startSluice(
      ["serve", "--port", "0"],
      cliEnv({ SLUICE_DATA_DIR: dir, SLUICE_JWKS_NETWORK: "public" }),
    );
    await server.waitFor(/Listening on/);
  });

  it("stops with exit code 2 and names the values on anything else", async () => {
    const { code, stdout, stderr } = await runSluice(
      ["serve", "--port", "0", "--jwks-network", "intranet"],
      cliEnv({ SLUICE_DATA_DIR: dir }),
    );
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr).toContain(
      'jwksNetwork: must be "public" or "private" (got "intranet", from --jwks-network)',
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
