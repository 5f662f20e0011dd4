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
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function dataDirWithCredential(): string {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    const data = openDataDir({ dataDir, secretKey: KEY });
    const { team } = data.catalog.createTeamWithOwner({
      teamName: "Acme",
      slug: "acme",
      ownerName: "Ada",
      ownerEmail: "ada@acme.test",
    });
    const credential = data.catalog.sealCredential("authorization", "Bearer sk-upstream");
    data.catalog.store.upsertPool(team.id, { ...poolInput("llm"), credential });
    data.close();
    return dataDir;
  }

  it("refuses a secret key that cannot open the stored credentials, naming the way out", () => {
    const dataDir = dataDirWithCredential();
    let refused: unknown;
    try {
      openDataDir({ dataDir, secretKey: OTHER_KEY });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    const message = (refused as Error).message;
    expect(message).toContain("SLUICE_SECRET_KEY");
    expect(message).toContain("pool llm");
    expect(message).not.toContain(OTHER_KEY);
    // The right key still opens it (the refused open closed its database again).
    const data = openDataDir({ dataDir, secretKey: KEY });
    expect(data.catalog.decryptCredential(data.catalog.store.listAllPools()[0]!)?.value).toBe(
      "Bearer sk-upstream",
    );
    data.close();
  });

  it("never makes a secret.key for a catalog set up with SLUICE_SECRET_KEY", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    openDataDir({ dataDir, secretKey: KEY }).close();
    // A command that forgot the key would seal new secrets under one no server has.
    expect(() => openDataDir({ dataDir })).toThrow(
      /holds a catalog but no secret\.key.*Set SLUICE_SECRET_KEY/,
    );
    // A read-only command opens it (it decrypts nothing) and creates nothing.
    openDataDir({ dataDir, create: false }).close();
    expect(existsSync(join(dataDir, "secret.key"))).toBe(false);
    openDataDir({ dataDir, secretKey: KEY }).close();
    expect(existsSync(join(dataDir, "secret.key"))).toBe(false);
  });

  it("a fresh directory gets its secret.key with its catalog", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    openDataDir({ dataDir }).close();
    expect(existsSync(join(dataDir, "secret.key"))).toBe(true);
    openDataDir({ dataDir }).close();
  });

  it("names the directory and the file when one cannot be opened", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-data-dir-"));
    dirs.push(dataDir);
    writeFileSync(join(dataDir, "sluice.db"), "not a database at all");
    expect(() => openDataDir({ dataDir, secretKey: KEY })).toThrow(
      `Data directory ${dataDir}, sluice.db: file is not a database`,
    );
    expect(() => openDataDir({ dataDir, secretKey: KEY })).toThrow(StoreUnavailableError);
    const notADirectory = join(dataDir, "sluice.db");
    expect(() => openDataDir({ dataDir: notADirectory })).toThrow(
      `The data directory ${notADirectory} is a file, not a directory.`,
    );
  });
});
