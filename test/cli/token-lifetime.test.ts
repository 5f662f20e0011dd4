import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../adapters/cli/run-cli.js";
import { captureIo } from "./capture-io.js";
import { CREATE_ACME, tempDir } from "./cli-process.js";

let dir: string;
let cleanup: () => void;

async function createToken(lifetime: string) {
  const captured = captureIo({ SLUICE_DATA_DIR: dir });
  const code = await runCli(
    [
      ...["token", "create", "--team", "acme", "--user", "ada@example.com", "--name", "ci"],
      ...["--abilities", "pools:read", "--lifetime", lifetime, "--json"],
    ],
    captured.io,
  );
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

/** Whole calendar months between a token's creation and its expiry. */
async function monthsOf(lifetime: string): Promise<number> {
  const result = await createToken(lifetime);
  expect(result, lifetime).toMatchObject({ code: 0, stderr: "" });
  const { created_at, expires_at } = JSON.parse(result.stdout);
  const [from, to] = [new Date(created_at), new Date(expires_at)];
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();
}

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("sluice-lifetime-"));
  expect(await runCli([...CREATE_ACME], captureIo({ SLUICE_DATA_DIR: dir }).io)).toBe(0);
});
afterEach(() => cleanup());

describe("sluice token create --lifetime", () => {
  it.each([
    ["1m", 1],
    ["1mo", 1],
    ["6m", 6],
    ["6mo", 6],
    ["12mo", 12],
    ["1y", 12],
  ])("reads %s as %i months", async (lifetime, months) => {
    expect(await monthsOf(lifetime)).toBe(months);
  });

  it.each(["30m", "1min", "1M", "60", "1h", "2y", "1 month"])(
    "refuses %s, saying m means months",
    async (lifetime) => {
      const result = await createToken(lifetime);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `--lifetime must be 1mo (or 1m), 6mo (or 6m) or 1y (got "${lifetime}").`,
      );
      expect(result.stdout).toBe("");
    },
  );

  it("points at months when the text looks like minutes", async () => {
    expect((await createToken("30m")).stderr).toContain("m and mo mean months, never minutes");
  });
});
