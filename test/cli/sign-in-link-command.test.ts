import { afterEach, describe, expect, it } from "vitest";
import {
  CREATE_ACME,
  cliEnv,
  type RunningSluice,
  runSluice,
  startSluice,
  tempDir,
} from "./cli-process.js";

/** Posts a dashboard form as the dashboard itself would (same origin). */
function postForm(base: string, path: string, form: Record<string, string>) {
  return fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams(form).toString(),
  });
}

describe("first run and sluice user sign-in-link against a running sluice serve", () => {
  const { dir, cleanup } = tempDir();
  let server: RunningSluice | undefined;
  afterEach(async () => {
    await server?.stop();
    cleanup();
  });

  it("prints a setup link on an empty catalog; a team created by the CLI later gets a sign-in link without a restart", {
    timeout: 90_000,
  }, async () => {
    server = startSluice(["serve", "--port", "0", "--data-dir", dir]);
    const [, setupUrl] = await server.waitFor(/^\s+(http:\S+\/setup\?token=slc_set_\S+)$/m);
    const base = new URL(setupUrl!).origin;
    expect(server.stdout()).toContain("No teams yet. Open this link to create yours");
    expect((await fetch(setupUrl!)).status).toBe(200);

    const created = await runSluice([...CREATE_ACME, "--data-dir", dir]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(
      `A dashboard sign-in link for the owner, any time: sluice user sign-in-link --email ada@example.com --data-dir ${dir}`,
    );
    // A team exists now: the setup link no longer creates one.
    expect((await fetch(setupUrl!)).status).toBe(409);

    const printed = await runSluice(
      ["user", "sign-in-link", "--email", "ADA@example.com", "--data-dir", dir],
      cliEnv({ SLUICE_BASE_URL: base }),
    );
    expect(printed.stderr).toBe("");
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("Sign in to team acme as ada@example.com (works once");
    const link = printed.stdout.match(/^\s+(\S+\/sign-in\/link\?token=(slc_sil_\S+))$/m);
    expect(link?.[1]?.startsWith(`${base}/sign-in/link?token=`)).toBe(true);
    const token = link![2]!;
    const first = await postForm(base, "/sign-in/link", { token });
    expect(first.status).toBe(303);
    expect(first.headers.get("set-cookie")).toMatch(/^sluice_session=slc_ses_/);
    expect((await postForm(base, "/sign-in/link", { token })).status).toBe(401);

    // Without SLUICE_BASE_URL: the link points at the port the server on this directory took.
    const recorded = await runSluice([
      "user",
      "sign-in-link",
      "--email",
      "ada@example.com",
      "--data-dir",
      dir,
    ]);
    expect(recorded.code).toBe(0);
    const recordedLink = recorded.stdout.match(/^\s+(\S+)\/sign-in\/link\?token=(slc_sil_\S+)$/m);
    expect(recordedLink?.[1]).toBe(base);
    expect((await postForm(base, "/sign-in/link", { token: recordedLink![2]! })).status).toBe(303);

    const flag = await runSluice([
      "user",
      "sign-in-link",
      "--email",
      "ada@example.com",
      "--team",
      "acme",
      "--base-url",
      "https://sluice.example.com/",
      "--data-dir",
      dir,
    ]);
    expect(flag.stdout).toMatch(
      /^ {2}https:\/\/sluice\.example\.com\/sign-in\/link\?token=slc_sil_/m,
    );

    const unknown = await runSluice([
      "user",
      "sign-in-link",
      "--email",
      "nobody@example.com",
      "--data-dir",
      dir,
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("nobody@example.com is in no team");
  });
});
