import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { firstSignInLinks } from "../../adapters/server/sign-in-links.js";

/** The dashboard as `sluice serve` mounts it: at the base URL's root, beside /api/v1. */
describe("dashboard in the server", () => {
  let dir: string;
  let server: SluiceServer | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-dashboard-"));
    const data = await openDataDir({ dataDir: dir });
    try {
      await data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      await data.catalog.createTeamWithOwner({
        teamName: "Globex",
        slug: "globex",
        ownerName: "Gus",
        ownerEmail: "gus@globex.test",
      });
    } finally {
      data.close();
    }
  });
  afterEach(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start() {
    // A catalog sync an hour apart: only the dashboard's own sync can apply its writes.
    server = await createSluiceServer(
      loadServerConfig({ flags: { port: "0", dataDir: dir, catalogSyncMs: "3600000" } }),
      { ...DEFAULT_SERVER_APPS },
    );
    return server;
  }

  it("serves the dashboard at / and keeps the Control API under /api/v1 and lock routes on /pools", async () => {
    const s = await start();
    const signIn = await s.app.request("http://localhost:8080/sign-in");
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get("content-type")).toMatch(/^text\/html/);
    const api = await s.app.request("http://localhost:8080/api/v1/me");
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ message: "Missing API token." });
    const root = await s.app.request("http://localhost:8080/");
    expect(root.status).toBe(303);
    expect(root.headers.get("location")).toBe("/sign-in");
    const lock = await s.app.request("http://localhost:8080/pools/none/lock/acquire", {
      method: "POST",
    });
    // The Lock API's answer (its JSON error shape), not the dashboard's sign-in redirect.
    expect(lock.headers.get("content-type")).toMatch(/^application\/json/);
    expect(typeof ((await lock.json()) as { error?: unknown }).error).toBe("string");
  });

  it("gives a one-time link per team nobody can sign in to, and applies a dashboard write to the governor at once", async () => {
    const s = await start();
    const links = await firstSignInLinks(s.auth, s.catalog.store, "http://localhost:8080");
    expect(links.map((link) => [link.team.slug, link.user.email])).toEqual([
      ["acme", "ada@acme.test"],
      ["globex", "gus@globex.test"],
    ]);
    const token = new URL(links[0]!.url).searchParams.get("token")!;
    const form = (body: Record<string, string>) => ({
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://localhost:8080",
        cookie,
      },
      body: new URLSearchParams(body).toString(),
    });
    let cookie = "";
    const signedIn = await s.app.request("http://localhost:8080/sign-in/link", form({ token }));
    expect(signedIn.status).toBe(303);
    cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
    await s.app.request(
      "http://localhost:8080/account/password",
      form({ password: "correct horse battery", repeat: "correct horse battery" }),
    );
    const after = await firstSignInLinks(s.auth, s.catalog.store, "http://localhost:8080");
    expect(after.map((link) => link.team.slug)).toEqual(["globex"]);

    // The MCP server's OAuth pages sign people in through the dashboard's sessions.
    const apps = await s.app.request("http://localhost:8080/oauth/connected-apps", {
      headers: { cookie },
    });
    expect(apps.status).toBe(200);
    const anonymous = await s.app.request("http://localhost:8080/oauth/connected-apps");
    expect(anonymous.headers.get("location")).toBe("/sign-in?next=%2Foauth%2Fconnected-apps");
    expect((await s.app.request("http://localhost:8080/healthz")).status).toBe(200);

    const created = await s.app.request(
      "http://localhost:8080/pool",
      form({
        name: "Chat",
        subdomain: "chat",
        backend: "http",
        origin: "https://api.example.test",
        maxConcurrent: "3",
      }),
    );
    expect(created.status).toBe(303);
    expect(s.governor.poolSettings("chat")?.maxConcurrent).toBe(3);
  });
});
