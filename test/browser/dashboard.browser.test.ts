import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CREATE_ACME,
  REPO_ROOT,
  type RunningSluice,
  runSluice,
  startSluice,
} from "../cli/cli-process.js";

/** Debian's chromium package (`.ci/run` installs it). */
const CHROMIUM = "/usr/lib/chromium/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
/** `UPDATE_SCREENSHOTS=1` writes the README's screenshots into docs/; otherwise into a temp dir. */
const SCREENSHOT_DIR = process.env.UPDATE_SCREENSHOTS === "1" ? join(REPO_ROOT, "docs") : null;

/** What the page's functions touch in the browser (the test is typed without the DOM library). */
interface PageGlobals {
  document: { querySelector(selector: string): { textContent: string | null } | null };
  notReloaded?: boolean;
}

/** Waits until the live figure of a pool on the open page starts with `held`, without reloading. */
async function waitForHeld(page: Page, pool: string, held: number): Promise<void> {
  await page.waitForFunction(
    ([name, count]) =>
      (globalThis as unknown as PageGlobals).document
        .querySelector(`[data-held="${name}"]`)
        ?.textContent?.trim()
        .startsWith(`${count} /`) === true,
    [pool, held] as const,
    { timeout: 15_000, polling: 200 },
  );
}

describe("dashboard in a real browser", () => {
  let dataDir: string;
  let profileDir: string;
  let shotDir: string;
  let server: RunningSluice;
  let context: BrowserContext;
  let page: Page;
  let baseUrl: string;
  let link: string;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sluice-browser-data-"));
    profileDir = mkdtempSync(join(tmpdir(), "sluice-browser-profile-"));
    shotDir = SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), "sluice-browser-shots-"));
    expect((await runSluice([...CREATE_ACME, "--data-dir", dataDir])).code).toBe(0);
    server = startSluice(["serve", "--port", "0", "--data-dir", dataDir]);
    [, baseUrl] = (await server.waitFor(/Dashboard: +(http:\/\/\S+?)\/?\n/, 60_000)) as unknown as [
      string,
      string,
    ];
    [, link] = (await server.waitFor(
      /\n {2}(http:\/\/\S+\/sign-in\/link\?token=\S+)/,
      30_000,
    )) as unknown as [string, string];
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profileDir, { recursive: true, force: true });
    if (!SCREENSHOT_DIR) rmSync(shotDir, { recursive: true, force: true });
  });

  it("goes from the one-time link to a governed pool, a key, an API token and back out", {
    timeout: 120_000,
  }, async () => {
    // The one-time link, then a password.
    await page.goto(link);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(/\/account\?welcome=1$/);
    await page.getByLabel("New password").fill("correct horse battery staple");
    await page.getByLabel("Repeat it").fill("correct horse battery staple");
    await page.getByRole("button", { name: "Save password" }).click();
    await page.getByText("Password saved.").waitFor();

    // A budget and two pools.
    await page.goto(`${baseUrl}/budget/new`);
    await page.getByLabel("Name").fill("LLM provider");
    await page.getByLabel("Origin max concurrent (shared ceiling)").fill("10");
    await page.getByRole("button", { name: "Create budget" }).click();
    await page.waitForURL(`${baseUrl}/`);
    for (const [name, subdomain, max, budget] of [
      ["Chat", "chat", "4", "LLM provider"],
      ["Embeddings", "embed", "2", "No budget"],
    ] as const) {
      await page.goto(`${baseUrl}/pool/new`);
      const field = (fieldName: string) => page.locator(`form.stack [name="${fieldName}"]`);
      await field("name").fill(name);
      await field("subdomain").fill(subdomain);
      await field("origin").fill("https://api.example.test");
      await field("maxConcurrent").fill(max);
      await field("budgetId").selectOption({ label: budget });
      if (budget !== "No budget") await field("reservedConcurrent").fill("2");
      await page.getByRole("button", { name: "Create pool" }).click();
      await page.waitForURL(`${baseUrl}/pool/${subdomain}`);
    }

    // A key of pool chat, shown once.
    await page.goto(`${baseUrl}/pool/chat`);
    await page.getByText("Mint a key").click();
    await page.getByLabel("Label").fill("browser test");
    await page.getByRole("button", { name: "Mint key" }).click();
    const key = (await page.locator("#minted-key").textContent())!.trim();
    expect(key).toMatch(/^slc_key_/);

    // The open overview follows a lock taken and released outside the browser.
    await page.goto(`${baseUrl}/`);
    await waitForHeld(page, "chat", 0);
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).notReloaded = true;
    });
    const acquire = await fetch(`${baseUrl}/pools/chat/lock/acquire`, {
      method: "POST",
      headers: { "x-svc-key": key, "content-type": "application/json" },
      body: "{}",
    });
    expect(acquire.status).toBe(200);
    const { slotId } = (await acquire.json()) as { slotId: string };
    await waitForHeld(page, "chat", 1);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).notReloaded)).toBe(
      true,
    );
    await page.screenshot({ path: join(shotDir, "dashboard-overview.png") });
    const release = await fetch(`${baseUrl}/pools/chat/lock/${slotId}/release`, {
      method: "POST",
      headers: { "x-svc-key": key, "content-type": "application/json" },
      body: '{"status": 200}',
    });
    expect(await release.json()).toEqual({ released: true });
    await waitForHeld(page, "chat", 0);

    // The pool page draws its chart with uPlot; then the key is revoked and stops working.
    await page.goto(`${baseUrl}/pool/chat`);
    await page.locator("#chart .uplot").waitFor({ timeout: 15_000 });
    expect(await page.locator("#curl-lines").textContent()).toContain(
      `${baseUrl}/pools/chat/lock/acquire`,
    );
    await page.screenshot({ path: join(shotDir, "dashboard-pool.png"), fullPage: true });
    await page
      .locator("tr", { hasText: "browser test" })
      .getByRole("button", { name: "Revoke" })
      .click();
    await page.locator("tr", { hasText: "browser test" }).getByText("revoked").waitFor();
    const refused = await fetch(`${baseUrl}/pools/chat/lock/acquire`, {
      method: "POST",
      headers: { "x-svc-key": key, "content-type": "application/json" },
      body: "{}",
    });
    expect(refused.status).toBe(401);

    // An API token, shown once, works on the Control API.
    await page.goto(`${baseUrl}/settings/tokens`);
    await page.getByLabel("Name").fill("browser token");
    await page.getByLabel("pools:read").check();
    await page.getByLabel("Expires after").selectOption({ label: "1 month" });
    await page.getByRole("button", { name: "Create token" }).click();
    const token = (await page.locator("#token-plaintext").textContent())!.trim();
    const me = await fetch(`${baseUrl}/api/v1/me`, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      user: { email: "ada@example.com" },
      abilities: ["pools:read"],
    });

    // Sign out: the dashboard asks to sign in again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${baseUrl}/sign-in`);
    await page.goto(`${baseUrl}/`);
    await page.waitForURL(`${baseUrl}/sign-in`);
    // htmx, uPlot and the dashboard's script all ran within the CSP.
    expect(cspViolations).toEqual([]);
  });
});
