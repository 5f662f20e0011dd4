import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../adapters/cli/run-cli.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { UnauthorizedError } from "../../src/errors.js";
import { captureIo } from "./capture-io.js";
import { CREATE_ACME, tempDir } from "./cli-process.js";

let dir: string;
let cleanup: () => void;

async function sluice(...args: string[]) {
  const captured = captureIo({ SLUICE_DATA_DIR: dir });
  const code = await runCli(args, captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

async function authenticate(token: string) {
  const data = await openDataDir({ dataDir: dir });
  try {
    return await data.catalog.authenticateApiToken(token);
  } finally {
    data.close();
  }
}

const createAcme = () =>
  sluice(
    "team",
    "create",
    "--name",
    "Acme",
    "--slug",
    "acme",
    "--owner-name",
    "Ada",
    "--owner-email",
    "Ada@Example.com",
  );

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("sluice-catalog-cli-"));
});

afterEach(async () => cleanup());

describe("sluice team create", () => {
  it("creates the team and owner in the data directory and says so", async () => {
    expect(await createAcme()).toEqual({
      code: 0,
      stdout:
        "Created team acme (id 1) with owner ada@example.com.\n" +
        "A dashboard sign-in link for the owner, any time: sluice user sign-in-link --email ada@example.com\n",
      stderr: "",
    });
    expect(existsSync(join(dir, "sluice.db"))).toBe(true);
    expect(existsSync(join(dir, "secret.key"))).toBe(true);
  });

  it("prints a sign-in command that pastes as it is, a data directory with spaces quoted", async () => {
    const spaced = join(dir, "Ada's data dir");
    const { code, stdout } = await sluice(...CREATE_ACME, "--data-dir", spaced);
    expect(code).toBe(0);
    const command = stdout.slice(stdout.indexOf("sluice user sign-in-link")).trim();
    // bash reads the printed line back into the very words the command needs.
    const words = execFileSync("bash", ["-c", `sluice() { printf '%s\\n' "$@"; }; ${command}`], {
      encoding: "utf8",
    });
    expect(words.split("\n").slice(0, -1)).toEqual([
      "user",
      "sign-in-link",
      "--email",
      "ada@example.com",
      "--data-dir",
      spaced,
    ]);
  });

  it("--data-dir wins over SLUICE_DATA_DIR", async () => {
    const other = join(dir, "other");
    const captured = captureIo({ SLUICE_DATA_DIR: dir });
    const args = [
      "team",
      "create",
      "--name",
      "A",
      "--slug",
      "a",
      "--owner-name",
      "A",
      "--owner-email",
      "a@example.com",
    ];
    expect(await runCli([...args, "--data-dir", other], captured.io)).toBe(0);
    expect(existsSync(join(other, "sluice.db"))).toBe(true);
    expect(existsSync(join(dir, "sluice.db"))).toBe(false);
  });

  it("an empty --data-dir exits 2 instead of using the current directory", async () => {
    for (const command of [["status"], ["token", "list", "--team", "a"]]) {
      const result = await sluice(...command, "--data-dir", "");
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--data-dir must not be empty");
    }
    expect(existsSync(join(process.cwd(), "sluice.db"))).toBe(false);
  });

  it("a taken slug exits 1; invalid input exits 2 naming the flags", async () => {
    await createAcme();
    expect(await createAcme()).toEqual({
      code: 1,
      stdout: "",
      stderr: 'Error: The team slug "acme" is taken.\n',
    });
    const invalid = await sluice(
      "team",
      "create",
      "--name",
      "X",
      "--slug",
      "Bad Slug",
      "--owner-name",
      "X",
      "--owner-email",
      "nope",
    );
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toBe(
      "Error: Invalid input:\n  --slug: Use 1-63 lower-case letters, digits and inner hyphens.\n  --owner-email: Must be an email address.\n",
    );
  });
});

describe("sluice user add", () => {
  const addUser = (team: string, name: string, email: string, ...extra: string[]) =>
    sluice("user", "add", "--team", team, "--name", name, "--email", email, ...extra);
  const addBo = (...extra: string[]) => addUser("acme", "Bo", "bo@example.com", ...extra);

  it("adds a member (default role) and changes roles", async () => {
    await createAcme();
    expect((await addBo()).stdout).toBe(
      "Added bo@example.com (user id 2) to team acme as member.\n",
    );
    expect((await addBo("--role", "admin")).stdout).toBe(
      "Changed the role of bo@example.com (user id 2) in team acme: member → admin.\n",
    );
    // Without --role, re-adding keeps the role.
    expect((await addBo()).stdout).toBe(
      "bo@example.com (user id 2) is already admin of team acme.\n",
    );
  });

  it("says so when an existing user keeps their name", async () => {
    await createAcme();
    await addBo();
    expect((await addUser("acme", "Robert", "bo@example.com")).stdout).toBe(
      "bo@example.com (user id 2) is already member of team acme.\n" +
        'Kept the name "Bo": a user\'s name is set when they are first added.\n',
    );
  });

  it("needs --name for a new user only", async () => {
    await createAcme();
    const nameless = (email: string, ...extra: string[]) =>
      sluice("user", "add", "--team", "acme", "--email", email, ...extra);
    const refused = await nameless("bo@example.com");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      "Error: bo@example.com is a new user: give their name with --name (needed only the first time).\n",
    );
    await addBo();
    // A known user keeps their name, and is not told so when none was given.
    expect((await nameless("bo@example.com", "--role", "admin")).stdout).toBe(
      "Changed the role of bo@example.com (user id 2) in team acme: member → admin.\n",
    );
  });

  it("refuses an unknown team and an unknown role", async () => {
    await createAcme();
    expect((await addUser("nope", "Bo", "bo@example.com")).stderr).toContain(
      'No team with slug "nope"',
    );
    const badRole = await addBo("--role", "king");
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain("--role: Must be one of owner, admin, member.");
  });

  it("refuses to demote the team's only owner, and says what to do instead", async () => {
    await createAcme();
    const demoteAda = () => addUser("acme", "Ada", "ada@example.com", "--role", "member");
    const refused = await demoteAda();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "--role: The team's only owner cannot step down; make another member owner first.",
    );
    await addBo("--role", "owner");
    expect((await demoteAda()).stdout).toBe(
      "Changed the role of ada@example.com (user id 1) in team acme: owner → member.\n" +
        "Ended their dashboard sessions and revoked their API tokens in the team.\n",
    );
  });
});

describe("sluice token", () => {
  beforeEach(async () => {
    await createAcme();
    await sluice("user", "add", "--team", "acme", "--name", "Bo", "--email", "bo@example.com");
  });

  it("create prints the plaintext once with a readable line, and it authenticates", async () => {
    const result = await sluice(
      "token",
      "create",
      "--team",
      "acme",
      "--user",
      "ada@example.com",
      "--name",
      "ci",
      "--abilities",
      "pools:read, metrics:read",
      "--lifetime",
      "6m",
    );
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^Created API token "ci" \(id 1\) for ada@example\.com in team acme; abilities pools:read, metrics:read; expires \d{4}-\d\d-\d\dT/,
    );
    expect(lines[1]).toBe("Copy it now, it is not shown again:");
    const plaintext = lines[3]!.trim();
    expect(await authenticate(plaintext)).toMatchObject({
      user: { email: "ada@example.com" },
      abilities: ["pools:read", "metrics:read"],
    });
  });

  it("create --json prints one JSON object for scripts; 'all' grants every ability", async () => {
    const result = await sluice(
      "token",
      "create",
      "--team",
      "acme",
      "--user",
      "ada@example.com",
      "--name",
      "ci",
      "--abilities",
      "all",
      "--lifetime",
      "1y",
      "--json",
    );
    const body = JSON.parse(result.stdout);
    expect(body).toMatchObject({
      id: 1,
      name: "ci",
      team: "acme",
      user: "ada@example.com",
      abilities: ["budgets:read", "pools:read", "pools:write", "keys:write", "metrics:read"],
      revoked_at: null,
    });
    expect(Date.parse(body.expires_at) - Date.parse(body.created_at)).toBeGreaterThan(
      364 * 86_400_000,
    );
    expect((await authenticate(body.token)).token.id).toBe(1);
  });

  it("a plain member may not create tokens; bad abilities and lifetimes exit 2", async () => {
    const base = ["token", "create", "--team", "acme", "--name", "x"];
    const member = await sluice(
      ...base,
      "--user",
      "bo@example.com",
      "--abilities",
      "pools:read",
      "--lifetime",
      "1m",
    );
    expect(member).toMatchObject({
      code: 1,
      stderr: "Error: Only organization owners and admins may manage API tokens.\n",
    });
    const ability = await sluice(
      ...base,
      "--user",
      "ada@example.com",
      "--abilities",
      "pools:delete",
      "--lifetime",
      "1m",
    );
    expect(ability).toMatchObject({
      code: 2,
      // The choices, so a mistyped ability is fixed without opening --help.
      stderr:
        'Error: --abilities: Unknown ability "pools:delete"; the abilities are budgets:read, pools:read, pools:write, keys:write, metrics:read, or all of them as "all".\n',
    });
    const allAndMore = await sluice(
      ...base,
      "--user",
      "ada@example.com",
      "--abilities",
      "all,foo",
      "--lifetime",
      "1m",
    );
    expect(allAndMore).toMatchObject({
      code: 2,
      stderr:
        "Error: --abilities all stands alone: it already grants budgets:read, pools:read, pools:write, keys:write, metrics:read.\n",
    });
    const lifetime = await sluice(
      ...base,
      "--user",
      "ada@example.com",
      "--abilities",
      "pools:read",
      "--lifetime",
      "2y",
    );
    expect(lifetime).toMatchObject({
      code: 2,
      stderr:
        'Error: --lifetime must be 1mo (or 1m), 6mo (or 6m) or 1y (got "2y"). Tokens last one month, six months or a year; m and mo mean months, never minutes.\n',
    });
    const stranger = await sluice(
      ...base,
      "--user",
      "eve@example.com",
      "--abilities",
      "pools:read",
      "--lifetime",
      "1m",
    );
    expect(stranger.stderr).toContain("eve@example.com is not a member of team acme");
  });

  it("list shows tokens without their values; revoke stops a token at once", async () => {
    const created = JSON.parse(
      (
        await sluice(
          "token",
          "create",
          "--team",
          "acme",
          "--user",
          "ada@example.com",
          "--name",
          "ci",
          "--abilities",
          "pools:read",
          "--lifetime",
          "1m",
          "--json",
        )
      ).stdout,
    );
    const listed = await sluice("token", "list", "--team", "acme");
    expect(listed.stdout).toMatch(
      /^API tokens of team acme:\n {2}1 {2}"ci" {2}ada@example\.com {2}pools:read {2}expires .*, never used\n$/,
    );
    expect(listed.stdout).not.toContain(created.token);

    expect(
      (await sluice("token", "revoke", "--team", "acme", "--user", "ada@example.com", "--id", "1"))
        .stdout,
    ).toBe('Revoked API token "ci" (id 1) of team acme.\n');
    await expect(authenticate(created.token)).rejects.toThrow(UnauthorizedError);
    const again = await sluice(
      ...["token", "revoke", "--team", "acme", "--user", "ada@example.com", "--id", "1"],
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /^API token "ci" \(id 1\) of team acme was already revoked on \d{4}-\d\d-\d\dT/,
    );
    const json = JSON.parse((await sluice("token", "list", "--team", "acme", "--json")).stdout);
    expect(json[0].revoked_at).toMatch(/^\d{4}-/);
    expect(JSON.stringify(json)).not.toContain(created.token);

    const missing = await sluice(
      "token",
      "revoke",
      "--team",
      "acme",
      "--user",
      "ada@example.com",
      "--id",
      "99",
    );
    expect(missing).toMatchObject({
      code: 1,
      stderr: "Error: team acme has no API token with id 99.\n",
    });
    expect(
      (await sluice("token", "revoke", "--team", "acme", "--user", "ada@example.com", "--id", "x"))
        .code,
    ).toBe(2);
  });
});

describe("commands that only read", () => {
  it("refuse a directory without a catalog and leave nothing behind", async () => {
    const missing = join(dir, "typo");
    for (const args of [["status"], ["token", "list", "--team", "acme"]]) {
      const result = await sluice(...args, "--data-dir", missing);
      expect(result).toEqual({
        code: 2,
        stdout: "",
        stderr: `Error: No Sluice data in ${missing} (no sluice.db there). Check --data-dir or SLUICE_DATA_DIR, or create a team first with "sluice team create".\n`,
      });
    }
    expect(existsSync(missing)).toBe(false);
  });

  it("and so do those that work on a team, pool or user there: only team create starts a catalog", async () => {
    const missing = join(dir, "typo");
    writeFileSync(join(dir, "acme.json"), JSON.stringify({ team: "acme", pools: [] }));
    for (const args of [
      ["apply", join(dir, "acme.json")],
      ["key", "create", "--pool", "chat"],
      ["key", "revoke", "--pool", "chat", "--id", "1"],
      ["token", "create", "--team", "acme", "--user", "ada@example.com", "--name", "ci"].concat([
        "--abilities",
        "all",
        "--lifetime",
        "1mo",
      ]),
      ["token", "revoke", "--team", "acme", "--user", "ada@example.com", "--id", "1"],
      ["user", "add", "--team", "acme", "--name", "Grace", "--email", "grace@example.com"],
      ["user", "sign-in-link", "--email", "ada@example.com"],
    ]) {
      const result = await sluice(...args, "--data-dir", missing);
      expect(result, args.join(" ")).toEqual({
        code: 2,
        stdout: "",
        stderr: `Error: No Sluice data in ${missing} (no sluice.db there). Check --data-dir or SLUICE_DATA_DIR, or create a team first with "sluice team create".\n`,
      });
    }
    expect(existsSync(missing)).toBe(false);
    expect((await sluice(...CREATE_ACME, "--data-dir", missing)).code).toBe(0);
    expect(existsSync(join(missing, "sluice.db"))).toBe(true);
  });

  it("name a data directory that is a file as such", async () => {
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "x");
    for (const args of [["status"], CREATE_ACME]) {
      const result = await sluice(...args, "--data-dir", file);
      expect(result.stderr).toBe(`Error: The data directory ${file} is a file, not a directory.\n`);
      expect(result.code).toBe(2);
    }
  });
});

describe("sluice status", () => {
  it("says when there is nothing yet, and prints JSON without secrets", async () => {
    await createAcme();
    expect((await sluice("status")).stdout).toBe(
      'Team acme "Acme" (id 1): 0 budgets, 0 pools\n  Nothing yet: add budgets and pools with "sluice apply <file.json>".\n',
    );
    const json = JSON.parse((await sluice("status", "--team", "acme", "--json")).stdout);
    expect(json).toEqual([{ team: { id: 1, name: "Acme", slug: "acme" }, budgets: [], pools: [] }]);
  });
});
