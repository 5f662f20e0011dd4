import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authServiceFor } from "../../adapters/cli/cli-auth.js";
import { runCli } from "../../adapters/cli/run-cli.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteAuthStore } from "../../adapters/sqlite/sqlite-auth-store.js";
import { verifyPassword } from "../../src/auth/passwords.js";
import { captureIo } from "./capture-io.js";
import {
  type CliResult,
  CREATE_ACME,
  cliEnv,
  REPO_ROOT,
  runSluice,
  tempDir,
} from "./cli-process.js";

/** `sluice <args>` with `input` piped to its stdin. */
function runWithStdin(args: readonly string[], input: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REPO_ROOT, "adapters/cli/main.ts"), ...args],
      {
        cwd: REPO_ROOT,
        env: cliEnv(),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("sluice user set-password", () => {
  const { dir, cleanup } = tempDir();
  afterEach(cleanup);

  it("reads the password from stdin, stores only a scrypt hash, and refuses a short one", {
    timeout: 60_000,
  }, async () => {
    expect((await runSluice([...CREATE_ACME, "--data-dir", dir])).code).toBe(0);
    const args = ["user", "set-password", "--email", "ADA@example.com", "--data-dir", dir];
    const short = await runWithStdin(args, "tiny\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("at least 12 characters");
    const set = await runWithStdin(args, "correct horse battery staple\n");
    expect(set.stderr).toBe("");
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("Set the password of ada@example.com");
    const database = openSluiceDatabase(join(dir, "sluice.db"));
    try {
      const stored = await new SqliteAuthStore(database).getPasswordHash(1);
      expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
      expect(stored).not.toContain("correct horse");
      expect(await verifyPassword("correct horse battery staple", stored)).toBe(true);
    } finally {
      database.close();
    }
    const unknown = await runWithStdin(
      ["user", "set-password", "--email", "nobody@example.com", "--data-dir", dir],
      "correct horse battery staple",
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No user with email nobody@example.com");
  });

  it("takes no password option on the command line", async () => {
    const result = await runSluice(["user", "set-password", "--email", "a@b.c", "--password", "x"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option --password");
  });
});

describe("sluice user add lowering someone to member", () => {
  const { dir, cleanup } = tempDir();
  afterEach(cleanup);

  it("ends their dashboard sessions and revokes their API tokens in the team", async () => {
    const io = captureIo({ SLUICE_DATA_DIR: dir });
    expect(await runCli([...CREATE_ACME], io.io)).toBe(0);
    const bo = ["user", "add", "--team", "acme", "--name", "Bo", "--email", "bo@example.com"];
    expect(await runCli([...bo, "--role", "admin"], io.io)).toBe(0);
    const data = await openDataDir({ dataDir: dir });
    let token: string;
    let session: string;
    try {
      const team = (await data.catalog.store.findTeamBySlug("acme"))!;
      const user = (await data.catalog.store.findUserByEmail("bo@example.com"))!;
      token = (
        await data.catalog.createApiToken({
          teamId: team.id,
          actorUserId: user.id,
          name: "bo",
          abilities: ["pools:read"],
          lifetime: "1y",
        })
      ).plaintext;
      const auth = authServiceFor(data.catalog);
      session = (await auth.redeemSignInLink((await auth.createSignInLink(team.id, user.id)).token))
        .sessionId;
    } finally {
      data.close();
    }
    expect(await runCli([...bo, "--role", "member"], io.io)).toBe(0);
    expect(io.stdout()).toContain(
      "Ended their dashboard sessions and revoked their API tokens in the team.",
    );
    const after = await openDataDir({ dataDir: dir });
    try {
      await expect(after.catalog.authenticateApiToken(token)).rejects.toThrow("revoked");
      expect(await authServiceFor(after.catalog).authenticate(session)).toBeNull();
    } finally {
      after.close();
    }
  });
});
