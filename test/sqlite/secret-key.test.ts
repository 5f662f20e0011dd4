import { randomBytes } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadOrCreateSecretKey } from "../../adapters/sqlite/secret-key.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { tempDirs } from "./temp-dir.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("loadOrCreateSecretKey", () => {
  it("takes SLUICE_SECRET_KEY when set, and writes no file", () => {
    const key = randomBytes(32);
    const dataDir = join(dirs.make(), "data");
    const loaded = loadOrCreateSecretKey({
      env: { SLUICE_SECRET_KEY: key.toString("base64") },
      dataDir,
    });
    expect(loaded.equals(key)).toBe(true);
    expect(() => statSync(join(dataDir, "secret.key"))).toThrow();
  });

  it("refuses a malformed or wrong-length env key without echoing it", () => {
    const dataDir = dirs.make();
    for (const value of [randomBytes(16).toString("base64"), "not base64 at all!", "abc"]) {
      const error = thrown(() =>
        loadOrCreateSecretKey({ env: { SLUICE_SECRET_KEY: value }, dataDir }),
      );
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toContain("SLUICE_SECRET_KEY");
      expect(error.message).not.toContain(value);
    }
  });

  it("creates secret.key with mode 0600 on first start and reuses it", () => {
    const dataDir = join(dirs.make(), "fresh", "data");
    const first = loadOrCreateSecretKey({ env: {}, dataDir });
    const path = join(dataDir, "secret.key");
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, "utf8").trim(), "base64").equals(first)).toBe(true);
    const second = loadOrCreateSecretKey({ env: { SLUICE_SECRET_KEY: "" }, dataDir });
    expect(second.equals(first)).toBe(true);
  });

  it("prefers the env key over an existing file", () => {
    const dataDir = dirs.make();
    loadOrCreateSecretKey({ env: {}, dataDir });
    const key = randomBytes(32);
    const loaded = loadOrCreateSecretKey({
      env: { SLUICE_SECRET_KEY: key.toString("base64") },
      dataDir,
    });
    expect(loaded.equals(key)).toBe(true);
  });

  it("refuses a corrupt key file rather than replacing it", () => {
    const dataDir = dirs.make();
    const path = join(dataDir, "secret.key");
    writeFileSync(path, "garbage\n", { mode: 0o600 });
    expect(() => loadOrCreateSecretKey({ env: {}, dataDir })).toThrow(InvalidArgumentError);
    expect(readFileSync(path, "utf8")).toBe("garbage\n");
  });
});
