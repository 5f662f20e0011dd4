import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { authServiceFor } from "../../adapters/cli/cli-auth.js";
import { runCli } from "../../adapters/cli/run-cli.js";
import {
  type CatalogDatabase,
  openCatalogDatabase,
} from "../../adapters/server/catalog-database.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteAuthStore } from "../../adapters/sqlite/sqlite-auth-store.js";
import { verifyPassword } from "../../src/auth/passwords.js";
import { createTestDatabase, requirePostgres, type TestDatabase } from "../support/postgres.js";
import { captureIo } from "./capture-io.js";
import { type CliResult, CREATE_ACME, cliEnv, runSluice, tempDir } from "./cli-process.js";

/** `sluice <args>` with `input` piped to its stdin. */
function runWithStdin(args: readonly string[], input: string): Promise<CliResult> {
  return runSluice(args, cliEnv(), input);
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

  it("names an unknown user before asking for a password", async () => {
    expect(await runCli([...CREATE_ACME, "--data-dir", dir], captureIo().io)).toBe(0);
    const prompts: string[] = [];
    const asked = captureIo({ SLUICE_DATA_DIR: dir });
    const io = {
      ...asked.io,
      readSecret: async (prompt: string) => {
        prompts.push(prompt);
        return "correct horse battery staple";
      },
    };
    const code = await runCli(["user", "set-password", "--email", "nobody@example.com"], io);
    expect(code).toBe(2);
    expect(asked.stderr()).toContain("No user with email nobody@example.com");
    expect(prompts).toEqual([]);
  });

  it("takes no password option on the command line", async () => {
    const result = await runSluice(["user", "set-password", "--email", "a@b.c", "--password", "x"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option --password");
  });
});

/** Where the CLI's catalog lives in a run: its environment, and the same catalog opened here. */
interface CatalogPlace {
  env: Record<string, string>;
  open(): Promise<CatalogDatabase>;
}

function describeLowering(name: string, place: () => Promise<CatalogPlace>): void {
  describe(`sluice user add lowering someone to member (${name})`, () => {
    it("ends their dashboard sessions and revokes their API tokens in the team", async () => {
      const { env, open } = await place();
      const io = captureIo(env);
      expect(await runCli([...CREATE_ACME], io.io)).toBe(0);
      const bo = ["user", "add", "--team", "acme", "--name", "Bo", "--email", "bo@example.com"];
      expect(await runCli([...bo, "--role", "admin"], io.io)).toBe(0);
      const data = await open();
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
        const auth = authServiceFor(data);
        session = (
          await auth.redeemSignInLink((await auth.createSignInLink(team.id, user.id)).token)
        ).sessionId;
      } finally {
        await data.close();
      }
      expect(await runCli([...bo, "--role", "member"], io.io)).toBe(0);
      expect(io.stdout()).toContain(
        "Ended their dashboard sessions and revoked their API tokens in the team.",
      );
      const after = await open();
      try {
        await expect(after.catalog.authenticateApiToken(token)).rejects.toThrow("revoked");
        expect(await authServiceFor(after).authenticate(session)).toBeNull();
      } finally {
        await after.close();
      }
    });
  });
}

const dirs = tempDir();
afterAll(dirs.cleanup);

describeLowering("data directory", async () => {
  const dataDir = join(dirs.dir, randomBytes(4).toString("hex"));
  return { env: { SLUICE_DATA_DIR: dataDir }, open: () => openCatalogDatabase({ dataDir }) };
});

if (await requirePostgres("sluice user add on PostgreSQL")) {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });
  describeLowering("PostgreSQL", async () => {
    const database = await createTestDatabase("pg_cli_auth");
    databases.push(database);
    const secretKey = randomBytes(32).toString("base64");
    // Never written: sessions, like the catalog, are in PostgreSQL.
    const dataDir = join(dirs.dir, "unused");
    return {
      env: {
        SLUICE_DATA_DIR: dataDir,
        SLUICE_DATABASE_URL: database.url,
        SLUICE_SECRET_KEY: secretKey,
      },
      open: () => openCatalogDatabase({ dataDir, databaseUrl: database.url, secretKey }),
    };
  });
}
