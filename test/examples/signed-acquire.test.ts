import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock/clock.js";
import { createHarness, type Harness } from "../lock-api/harness.js";

const run = promisify(execFile);

/** The curl + openssl client of docs/caller-policies.md against a real Lock API. */
describe("examples/signed-acquire.sh", () => {
  let h: Harness;
  beforeEach(async () => {
    // The script signs with the wall clock.
    h = await createHarness({ clock: systemClock });
  });
  afterEach(async () => h.close());

  it("acquires a slot on an hmac pool, and its signature is refused when the secret is wrong", async () => {
    await h.addPool({ subdomain: "llm", callerPolicies: { hmac: { skewSeconds: 300 } } });
    const minted = await h.mintKey("llm");
    const env = {
      ...process.env,
      SLUICE_LOCK_URL: h.lock.url,
      POOL: "llm",
      KEY: minted.plaintext,
      KEY_ID: String(minted.key.id),
      SECRET: minted.requestSecret as string,
    };
    const { stdout } = await run("bash", ["examples/signed-acquire.sh"], { env });
    expect(JSON.parse(stdout)).toMatchObject({ slotId: expect.any(String) });
    const wrong = await run("bash", ["examples/signed-acquire.sh"], {
      env: { ...env, SECRET: "slc_req_wrong" },
    });
    expect(JSON.parse(wrong.stdout)).toMatchObject({ error: "unauthorized" });
  });

  it("names every variable left unset, with exit code 2, before calling anything", async () => {
    // POOL and SECRET unset, whatever the shell running the tests has.
    const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_LOCK_URL: h.lock.url };
    Object.assign(env, { KEY: "slc_key_x", KEY_ID: "1" });
    delete env.POOL;
    delete env.SECRET;
    const failed = await run("bash", ["examples/signed-acquire.sh"], { env }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 2, stdout: "" });
    expect((failed as { stderr: string }).stderr).toMatch(/^Set POOL SECRET\. /);
  });

  it("is the script docs/caller-policies.md prints", () => {
    const doc = readFileSync("docs/caller-policies.md", "utf8");
    const script = readFileSync("examples/signed-acquire.sh", "utf8");
    expect(doc).toContain(`\`\`\`sh\n${script}\`\`\``);
  });
});
