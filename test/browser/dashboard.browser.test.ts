import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, type RunningSluice, startSluice } from "../cli/cli-process.js";
import { CHROMIUM, chromiumAvailable } from "../support/chromium.js";

const HAS_CHROMIUM = chromiumAvailable("the dashboard browser test");
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
const PASSWORD = "correct horse battery staple";
/** `UPDATE_SCREENSHOTS=1` writes the README's screenshots into docs/; otherwise into a temp dir. */
const SCREENSHOT_DIR = process.env.UPDATE_SCREENSHOTS === "1" ? join(REPO_ROOT, "docs") : null;

/** What the page's functions touch in the browser (the test is typed without the DOM library). */
interface PageGlobals {
  document: {
    querySelector(selector: string): { textContent: string | null } | null;
    documentElement: { scrollWidth: number; clientWidth: number };
  };
  notReloaded?: boolean;
}

/** The document as the focus test reads it. */
interface FocusGlobals {
  document: {
    activeElement: { id: string } | null;
    getElementById(id: string): {
      getAttribute(name: string): string | null;
      setAttribute(name: string, value: string): void;
    } | null;
  };
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

describe.skipIf(!HAS_CHROMIUM)("dashboard in a real browser", () => {
  let dataDir: string;
  let profileDir: string;
  let shotDir: string;
  let server: RunningSluice;
  let context: BrowserContext;
  let page: Page;
  let baseUrl: string;
  let setupLink: string;
  const cspViolations: string[] = [];
  /** Every console error of every page (a failed load, a script error), with its page. */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sluice-browser-data-"));
    profileDir = mkdtempSync(join(tmpdir(), "sluice-browser-profile-"));
    shotDir = SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), "sluice-browser-shots-"));
    server = startSluice(["serve", "--port", "0", "--data-dir", dataDir]);
    [, baseUrl] = (await server.waitFor(/Dashboard: +(http:\/\/\S+?)\/?\n/, 60_000)) as unknown as [
      string,
      string,
    ];
    // An empty catalog: the server prints a first-run setup link.
    [, setupLink] = (await server.waitFor(
      /\n {2}(http:\/\/\S+\/setup\?token=\S+)/,
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
      if (message.type() === "error") consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profileDir, { recursive: true, force: true });
    if (!SCREENSHOT_DIR) rmSync(shotDir, { recursive: true, force: true });
  });

  it("goes from the setup link on an empty catalog to a governed pool, a key, an API token, out and back in", {
    timeout: 120_000,
  }, async () => {
    // First run: the setup link creates the team with you as owner and signs you in.
    await page.goto(setupLink);
    await page.getByLabel("Team name").fill("Acme");
    await page.getByLabel("Team slug").fill("acme");
    await page.getByLabel("Your name").fill("Ada Lovelace");
    await page.getByLabel("Your email").fill("ada@example.com");
    await page.screenshot({ path: join(shotDir, "dashboard-setup.png") });
    await page.locator(`form.stack [name="password"]`).fill("short");
    await page.getByLabel("Repeat it").fill("short");
    await page.getByRole("button", { name: "Create team" }).click();
    // A refused form comes back with the error next to its field and the rest kept.
    await page.locator("#error-password").getByText("Use at least 12 characters.").waitFor();
    expect(await page.getByLabel("Team slug").inputValue()).toBe("acme");
    await page.locator(`form.stack [name="password"]`).fill(PASSWORD);
    await page.getByLabel("Repeat it").fill(PASSWORD);
    await page.getByRole("button", { name: "Create team" }).click();
    await page.waitForURL(`${baseUrl}/`);

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
      // A caller policy set in the form: only this machine may take chat's slots.
      if (subdomain === "chat") await page.getByLabel("IP allowlist").fill("127.0.0.0/8\n::1");
      await page.getByRole("button", { name: "Create pool" }).click();
      await page.waitForURL(`${baseUrl}/pool/${subdomain}`);
    }

    // A key of pool chat, shown once; the pool page lists its policy.
    await page.goto(`${baseUrl}/pool/chat`);
    expect(await page.locator("#caller-policy-summary").textContent()).toContain(
      "IP allowlist: 127.0.0.0/8, ::1",
    );
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
    await page.waitForURL(new RegExp(`^${baseUrl}/sign-in`));
    // Back in with the password chosen at setup; the setup link is spent.
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${baseUrl}/`);
    expect((await fetch(setupLink)).status).toBe(409);
    // htmx, uPlot and the dashboard's script all ran within the CSP.
    expect(cspViolations).toEqual([]);
  });

  it("keeps a keyboard user's place on the overview across its 2 s refresh", {
    timeout: 30_000,
  }, async () => {
    // Signed in by the first test. Tab to pool chat's link, inside the live section.
    await page.goto(`${baseUrl}/`);
    for (let tabs = 0; tabs < 40; tabs += 1) {
      await page.keyboard.press("Tab");
      const id = await page.evaluate(
        () => (globalThis as unknown as FocusGlobals).document.activeElement?.id ?? "",
      );
      if (id === "pool-link-chat") break;
    }
    // Mark the section; the refresh replaces it (outerHTML), so the mark goes with it.
    await page.evaluate(() => {
      (globalThis as unknown as FocusGlobals).document
        .getElementById("live-overview")
        ?.setAttribute("data-old", "yes");
    });
    await page.waitForFunction(
      () =>
        (globalThis as unknown as FocusGlobals).document
          .getElementById("live-overview")
          ?.getAttribute("data-old") !== "yes",
      undefined,
      { timeout: 10_000, polling: 100 },
    );
    expect(
      await page.evaluate(
        () => (globalThis as unknown as FocusGlobals).document.activeElement?.id ?? "",
      ),
    ).toBe("pool-link-chat");
    // Enter follows the link the keyboard is on.
    await page.keyboard.press("Enter");
    await page.waitForURL(`${baseUrl}/pool/chat`);
  });

  it("has Copy select a minted key where the browser offers no clipboard (plain http off localhost)", {
    timeout: 30_000,
  }, async () => {
    // Signed in by the first test. This page alone has no clipboard API.
    const bare = await context.newPage();
    try {
      await bare.addInitScript(() => {
        const scope = globalThis as unknown as { Navigator: { prototype: object } };
        Object.defineProperty(scope.Navigator.prototype, "clipboard", { get: () => undefined });
      });
      await bare.goto(`${baseUrl}/pool/chat`);
      await bare.getByText("Mint a key").click();
      await bare.getByLabel("Label").fill("copy without clipboard");
      await bare.getByRole("button", { name: "Mint key" }).click();
      const key = (await bare.locator("#minted-key").textContent())!.trim();
      await bare.locator('button[data-copy="minted-key"]').click();
      await bare.getByText("Selected: press Ctrl+C").waitFor({ timeout: 5_000 });
      const selected = await bare.evaluate(() =>
        String((globalThis as unknown as { getSelection(): unknown }).getSelection()).trim(),
      );
      expect(selected).toBe(key);
    } finally {
      await bare.close();
    }
  });

  it("says so when the chart's figures cannot be loaded, with no script error", {
    timeout: 30_000,
  }, async () => {
    const errors: string[] = [];
    const other = await context.newPage();
    try {
      other.on("pageerror", (error) => errors.push(error.message));
      // As when the session ends between the page and its chart: the sign-in page comes back.
      await other.route("**/pool/chat/series*", (route) =>
        route.fulfill({
          status: 200,
          contentType: "text/html",
          body: "<!doctype html><p>Sign in</p>",
        }),
      );
      await other.goto(`${baseUrl}/pool/chat`);
      await other
        .locator("#chart")
        .getByText("The chart could not be loaded")
        .waitFor({ timeout: 5_000 });
      expect(errors).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("fits a phone's width: no page scrolls sideways, even after the window narrows, and no console errors", {
    timeout: 60_000,
  }, async () => {
    // Signed in by the test above. The pool page is opened wide first: its chart, drawn
    // 1 200 px wide, must follow the window down.
    consoleErrors.length = 0;
    await page.goto(`${baseUrl}/pool/chat`);
    await page.locator("#chart .uplot").waitFor({ timeout: 15_000 });
    await page.setViewportSize({ width: 360, height: 800 });
    const sideways = () =>
      page.evaluate(() => {
        const root = (globalThis as unknown as PageGlobals).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
    await expect.poll(sideways, { timeout: 5_000 }).toBe(0);
    for (const path of [
      "/",
      "/pool/chat",
      "/pool/chat/edit",
      "/pool/new",
      "/budget/new",
      "/settings/tokens",
      "/settings/members",
      "/account",
    ]) {
      await page.goto(`${baseUrl}${path}`);
      await page.waitForLoadState("load");
      expect({ path, sideways: await sideways() }).toEqual({ path, sideways: 0 });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    // No /favicon.ico 404 or any other failed load on any page.
    expect(consoleErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
