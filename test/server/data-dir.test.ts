import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { InvalidArgumentError, StoreUnavailableError } from "../../src/errors.js";
import { poolInput } from "./fixtures.js";

const KEY = randomBytes(32).toString("base64");
const OTHER_KEY = randomBytes(32).toString("base64");

describe("openDataDir", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function dataDirWithCredential(): Promise<string> {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    const data = await openDataDir({ dataDir, secretKey: KEY });
    const { team } = await data.catalog.createTeamWithOwner({
      teamName: "Acme",
      slug: "acme",
      ownerName: "Ada",
      ownerEmail: "ada@acme.test",
    });
    const credential = data.catalog.sealCredential("authorization", "Bearer sk-upstream");
    await data.catalog.store.upsertPool(team.id, { ...poolInput("llm"), credential });
    data.close();
    return dataDir;
  }

  it("refuses a secret key that cannot open the stored credentials, naming the way out", async () => {
    const dataDir = await dataDirWithCredential();
    let refused: unknown;
    try {
      await openDataDir({ dataDir, secretKey: OTHER_KEY });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    const message = (refused as Error).message;
    expect(message).toContain("SLUICE_SECRET_KEY");
    expect(message).toContain("pool llm");
    expect(message).not.toContain(OTHER_KEY);
    // The right key still opens it (the refused open closed its database again).
    const data = await openDataDir({ dataDir, secretKey: KEY });
    expect(
      data.catalog.decryptCredential((await data.catalog.store.listAllPools())[0]!)?.value,
    ).toBe("Bearer sk-upstream");
    data.close();
  });

  it("never makes a secret.key for a catalog set up with SLUICE_SECRET_KEY", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    (await openDataDir({ dataDir, secretKey: KEY })).close();
    // A command that forgot the key would seal new secrets under one no server has.
    await expect(openDataDir({ dataDir })).rejects.toThrow(
      /holds a catalog but no secret\.key.*Set SLUICE_SECRET_KEY/,
    );
    // A read-only command opens it (it decrypts nothing) and creates nothing.
    (await openDataDir({ dataDir, create: false })).close();
    expect(existsSync(join(dataDir, "secret.key"))).toBe(false);
    (await openDataDir({ dataDir, secretKey: KEY })).close();
    expect(existsSync(join(dataDir, "secret.key"))).toBe(false);
  });

  it("a fresh directory gets its secret.key with its catalog", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    (await openDataDir({ dataDir })).close();
    expect(existsSync(join(dataDir, "secret.key"))).toBe(true);
    (await openDataDir({ dataDir })).close();
  });

  it("names the directory and the file when one cannot be opened", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    writeFileSync(join(dataDir, "sluice.db"), "not a database at all");
    await expect(openDataDir({ dataDir, secretKey: KEY })).rejects.toThrow(
      `Data directory ${dataDir}, sluice.db: file is not a database`,
    );
    await expect(openDataDir({ dataDir, secretKey: KEY })).rejects.toThrow(StoreUnavailableError);
    const notADirectory = join(dataDir, "sluice.db");
    await expect(openDataDir({ dataDir: notADirectory })).rejects.toThrow(
      `The data directory ${notADirectory} is a file, not a directory.`,
    );
  });
});
