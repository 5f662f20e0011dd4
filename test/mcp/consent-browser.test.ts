import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, chromiumAvailable } from "../support/chromium.js";
import { type AssistantServer, discover, INSECURE, startAssistantServer } from "./harness.js";

const HAS_CHROMIUM = chromiumAvailable("the MCP consent browser test");

let env: AssistantServer;
let browser: Browser;
let callback: Server;
let callbackUrl: string;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  env = await startAssistantServer();
  browser = await chromium.launch({ executablePath: CHROMIUM });
  // Where the browser lands after consent, as a desktop client's loopback listener would.
  callback = createServer((_request, response) => response.end("signed in"));
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
});
afterAll(async () => {
  await browser?.close();
  callback?.close();
  await env?.close();
});

describe.skipIf(!HAS_CHROMIUM)("the consent page in a browser", () => {
  it("names the client, its redirect host and the scopes, and Allow sends a code back", async () => {
    const { as } = await discover(env.resource);
    const client = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { redirect_uris: [callbackUrl], client_name: "Claude Desktop" },
        INSECURE,
      ),
    );
    const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
    const context = await browser.newContext();
    await context.addCookies([
      { name: "test_session", value: cookie.split("=")[1] as string, url: env.baseUrl },
    ]);
    const page = await context.newPage();
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: callbackUrl,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state: "browser-state",
      resource: env.resource,
    }).toString();
    await page.goto(url.toString());
    expect(await page.getByRole("heading").textContent()).toBe(
      "Allow Claude Desktop to use Sluice?",
    );
    const text = await page.locator("main").textContent();
    expect(text).toContain("Signed in as Ada in Acme.");
    expect(text).toContain(`sent back to ${new URL(callbackUrl).host}`);
    expect(text).toContain("Mint and revoke pool keys (keys:write)");
    if (process.env.SLUICE_SCREENSHOTS) {
      mkdirSync("docs/images", { recursive: true });
      await page.setViewportSize({ width: 760, height: 640 });
      await page.screenshot({ path: "docs/images/mcp-consent.png", fullPage: true });
    }
    // The real browser's Origin / Sec-Fetch-Site headers pass the CSRF check.
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((landed) => landed.toString().startsWith(callbackUrl));
    const landed = new URL(page.url());
    expect(landed.searchParams.get("state")).toBe("browser-state");
    expect(landed.searchParams.get("iss")).toBe(env.baseUrl);
    expect(landed.searchParams.get("code")).toMatch(/^slc_mac_/);
    await context.close();
  });
});
