import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import {
  lockForServing,
  redisTargetOf,
  type ServingLock,
} from "../../adapters/server/serving-lock.js";
import { ConflictError } from "../../src/errors.js";
import { tempDir } from "../cli/cli-process.js";

const execFileAsync = promisify(execFile);

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

const IN_MEMORY = null;
const REDIS = redisTargetOf("redis://127.0.0.1:6379", "sluice:");

function take(redisTarget: string | null): ServingLock {
  const lock = lockForServing(dir, redisTarget);
  held.push(lock);
  return lock;
}

// SQLite's file locks hold between connections of one process too, so the matrix runs here;
// test/cli/headless.test.ts shows the same between real `sluice serve` processes.
describe("serving lock: one in-memory server per data directory", () => {
  it("a second sole server is refused, and may start once the first let go", () => {
    const first = take(IN_MEMORY);
    expect(() => take(IN_MEMORY)).toThrow(ConflictError);
    expect(() => take(IN_MEMORY)).toThrow(/only one there, or each would admit every pool's full/);
    first.release();
    expect(() => take(IN_MEMORY)).not.toThrow();
  });

  it("shared servers run side by side, and keep a sole one out until the last let go", () => {
    const first = take(REDIS);
    const second = take(REDIS);
    expect(() => take(IN_MEMORY)).toThrow(ConflictError);
    first.release();
    expect(() => take(IN_MEMORY)).toThrow(ConflictError);
    second.release();
    expect(() => take(IN_MEMORY)).not.toThrow();
  });

  it("Redis servers share the directory only with the same Redis target", () => {
    take(REDIS);
    // The same Redis, spelt otherwise, and credentials that never reach the lock file.
    expect(() => take(redisTargetOf("redis://:pw@LOCALHOST:6379/0", "sluice:"))).not.toThrow();
    expect(redisTargetOf("redis://:pw@LOCALHOST/0", "sluice:")).not.toContain("pw");
    for (const other of [
      redisTargetOf("redis://127.0.0.1:6379/3", "sluice:"),
      redisTargetOf("redis://127.0.0.1:6379", "other:"),
      redisTargetOf("redis://10.0.0.5:6379", "sluice:"),
    ]) {
      expect(() => take(other)).toThrow(/would not share their limits/);
    }
  });

  it("the first Redis server after everyone stopped records its own target", () => {
    const first = take(REDIS);
    first.release();
    const other = redisTargetOf("redis://127.0.0.1:6379", "other:");
    take(other);
    expect(() => take(other)).not.toThrow();
  });

  it("a shared server is refused beside a sole one, and told why", () => {
    take(IN_MEMORY);
    expect(() => take(REDIS)).toThrow(
      /server with the in-memory slot store is already serving the data directory/,
    );
  });

  it("names the lock file, and the way out, when it is not what it should be", () => {
    writeFileSync(join(dir, "serve.lock"), "garbage that is no SQLite database");
    expect(() => take(IN_MEMORY)).toThrow(
      /serve\.lock: file is not a database\. It holds only the serving lock: with no server running, delete it\./,
    );
  });

  it("Redis servers starting at the same instant on a fresh directory all get in", async () => {
    const entry = fileURLToPath(new URL("../../adapters/server/serving-lock.ts", import.meta.url));
    // Each process waits for one shared instant (past every process's start-up), takes the
    // lock, says so, and holds it a moment so the others overlap it.
    const startAt = Date.now() + 3_000;
    const script = `
      const { lockForServing } = await import(${JSON.stringify(entry)});
      await new Promise((resolve) => setTimeout(resolve, ${startAt} - Date.now() - 20));
      while (Date.now() < ${startAt});
      try {
        lockForServing(${JSON.stringify(dir)}, ${JSON.stringify(REDIS)});
        console.log("in");
        await new Promise((resolve) => setTimeout(resolve, 500));
      } catch (error) {
        console.log(error.message);
      }`;
    const starts = Array.from({ length: 6 }, () =>
      execFileAsync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]),
    );
    const answers = (await Promise.all(starts)).map((result) => result.stdout.trim());
    expect(answers).toEqual(Array(6).fill("in"));
  });

  it("release is safe twice", () => {
    const lock = take(IN_MEMORY);
    lock.release();
    lock.release();
    expect(() => take(IN_MEMORY)).not.toThrow();
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
