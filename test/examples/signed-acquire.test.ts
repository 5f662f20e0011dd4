import { execFile } from "node:child_process";
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
});
