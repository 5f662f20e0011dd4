import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import {
  lockForServing,
  type ServingLock,
  type ServingMode,
} from "../../adapters/server/serving-lock.js";
import { ConflictError } from "../../src/errors.js";
import { tempDir } from "../cli/cli-process.js";

let dir: string;
let cleanup: () => void;
let held: ServingLock[];

beforeEach(() => {
  ({ dir, cleanup } = tempDir("sluice-serving-lock-"));
  held = [];
});

afterEach(() => {
  for (const lock of held) lock.release();
  cleanup();
});

function take(mode: ServingMode): ServingLock {
  const lock = lockForServing(dir, mode);
  held.push(lock);
  return lock;
}

// SQLite's file locks hold between connections of one process too, so the matrix runs here;
// test/cli/headless.test.ts shows the same between real `sluice serve` processes.
describe("serving lock: one in-memory server per data directory", () => {
  it("a second sole server is refused, and may start once the first let go", () => {
    const first = take("sole");
    expect(() => take("sole")).toThrow(ConflictError);
    expect(() => take("sole")).toThrow(/only one there, or each would admit every pool's full/);
    first.release();
    expect(() => take("sole")).not.toThrow();
  });

  it("shared servers run side by side, and keep a sole one out until the last let go", () => {
    const first = take("shared");
    const second = take("shared");
    expect(() => take("sole")).toThrow(ConflictError);
    first.release();
    expect(() => take("sole")).toThrow(ConflictError);
    second.release();
    expect(() => take("sole")).not.toThrow();
  });

  it("a shared server is refused beside a sole one, and told why", () => {
    take("sole");
    expect(() => take("shared")).toThrow(
      /server with the in-memory slot store is already serving the data directory/,
    );
  });

  it("names the lock file, and the way out, when it is not what it should be", () => {
    writeFileSync(join(dir, "serve.lock"), "garbage that is no SQLite database");
    expect(() => take("sole")).toThrow(
      /serve\.lock: file is not a database\. It holds only the serving lock: with no server running, delete it\./,
    );
  });

  it("release is safe twice", () => {
    const lock = take("sole");
    lock.release();
    lock.release();
    expect(() => take("sole")).not.toThrow();
  });

  it("createSluiceServer holds the lock until close", async () => {
    const config = loadServerConfig({ flags: { port: "0", dataDir: dir } });
    const first: SluiceServer = await createSluiceServer(config);
    try {
      await expect(createSluiceServer(config)).rejects.toThrow(ConflictError);
    } finally {
      await first.close();
    }
    const next = await createSluiceServer(config);
    await next.close();
  });
});
