import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const entry = pathToFileURL(join(root, "src/index.ts")).href;
const scratch = mkdtempSync(join(tmpdir(), "sluice-keep-alive-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs a script in a fresh Node process with the real system clock; nothing else keeps it alive. */
async function runScript(name: string, body: string) {
  const file = join(scratch, `${name}.mts`);
  writeFileSync(file, `import { createGovernor } from ${JSON.stringify(entry)};\n${body}`);
  return run(process.execPath, ["--import", "tsx", file], { cwd: root, timeout: 20_000 });
}

describe("a queued caller keeps the process alive", () => {
  it("waits out a Retry-After pause instead of letting Node exit", async () => {
    // Only an unref'd governor timer ends this wait (as with an RPM turn or a lease running out). Without the keep-alive, Node exits with
    // code 13 ("unsettled top-level await") and prints nothing after "waiting".
    const { stdout } = await runScript(
      "pause-and-rpm",
      `const governor = createGovernor();
       await governor.definePool("paused", { maxConcurrent: 1, queue: { size: 1, timeoutMs: 5_000 } });
       const first = await governor.acquire("paused");
       await governor.release("paused", first.slotId, { status: 429, retryAfterMs: 300 });
       console.log("waiting");
       const afterPause = await governor.acquire("paused", { waitMs: 5_000 });
       console.log("after pause", afterPause.queuedMs >= 250);
       await governor.close();`,
    );
    expect(stdout.trim().split("\n")).toEqual(["waiting", "after pause true"]);
  });

  it("lets the process exit once nobody waits, although held leases still have timers", async () => {
    const started = Date.now();
    const { stdout } = await runScript(
      "exits",
      `const governor = createGovernor();
       await governor.definePool("p", { maxConcurrent: 1, queue: { size: 1, timeoutMs: 60_000 } });
       const held = await governor.acquire("p");
       const waiting = governor.acquire("p", { waitMs: 60_000 });
       await governor.release("p", held.slotId);
       await waiting; // granted; its lease (30 s term) must not hold the process
       console.log("done");`,
    );
    expect(stdout.trim()).toBe("done");
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
