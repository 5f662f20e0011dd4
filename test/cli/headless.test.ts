import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { httpRequest } from "../server/http-client.js";
import {
  CREATE_ACME,
  cliEnv,
  REPO_ROOT,
  type RunningSluice,
  runSluice,
  startSluice,
  tempDir,
} from "./cli-process.js";

interface PoolBody {
  subdomain: string;
  max_concurrent: number;
  budget: { name: string; reserved_concurrent: number } | null;
}

let dir: string;
let cleanup: () => void;
let server: RunningSluice | undefined;

beforeEach(() => {
  ({ dir, cleanup } = tempDir("sluice-headless-"));
  server = undefined;
});

afterEach(async () => {
  await server?.stop("SIGKILL");
  cleanup();
});

// Each step spawns a Node process; on a busy two-core machine the full path takes a while.
describe("headless path: CLI and server as real processes", { timeout: 90_000 }, () => {
  it("team → token → serve → /me → apply → pools live → re-apply → SIGTERM", async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    const sluice = (...args: string[]) => runSluice(args, env);

    const team = await sluice(...CREATE_ACME);
    expect(team).toMatchObject({ code: 0, stderr: "" });
    expect(team.stdout).toBe(
      "Created team acme (id 1) with owner ada@example.com.\n" +
        "A dashboard sign-in link for the owner, any time: sluice user sign-in-link --email ada@example.com\n",
    );

    const minted = await sluice(
      "token",
      "create",
      "--team",
      "acme",
      "--user",
      "ada@example.com",
      "--name",
      "headless",
      "--abilities",
      "pools:read,budgets:read",
      "--lifetime",
      "1m",
      "--json",
    );
    expect(minted.code).toBe(0);
    const { token, abilities } = JSON.parse(minted.stdout) as {
      token: string;
      abilities: string[];
    };
    expect(token).toMatch(/^slc_tok_/);
    expect(abilities).toEqual(["budgets:read", "pools:read"]);

    server = startSluice(["serve", "--port", "0", "--catalog-sync-ms", "100"], env);
    const [, baseUrl] = await server.waitFor(/Control API: (http:\/\/localhost:\d+)\/api\/v1\n/);
    const port = Number(new URL(baseUrl!).port);
    const get = (path: string) =>
      httpRequest({
        port,
        path,
        host: `localhost:${port}`,
        headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      });

    const me = await get("/api/v1/me");
    expect(me.status).toBe(200);
    expect(me.json()).toEqual({
      user: { id: 1, name: "Ada Lovelace", email: "ada@example.com" },
      team: { id: 1, name: "Acme", slug: "acme" },
      abilities: ["budgets:read", "pools:read"],
    });
    expect((await get("/api/v1/pools")).json()).toEqual({ data: [] });

    const example = join(REPO_ROOT, "examples/sluice.config.json");
    const applied = await sluice("apply", example);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(
      "Created budget local-llm\nCreated pool chat\nCreated pool embed\n",
    );

    // The running server's governor takes the pools in through the catalog sync.
    await server.waitFor(
      /Catalog synced: 2 pools defined \(chat, embed\), 1 budget defined \(local-llm #1\)/,
    );
    const pools = (await get("/api/v1/pools")).json<{ data: PoolBody[] }>().data;
    expect(
      pools.map((pool) => [pool.subdomain, pool.max_concurrent, pool.budget?.reserved_concurrent]),
    ).toEqual([
      ["chat", 4, 2],
      ["embed", 2, 1],
    ]);

    const again = await sluice("apply", example);
    expect(again.stdout).toContain("Done: 0 create, 0 update, 0 delete, 3 unchanged.");

    const changed = JSON.parse(readFileSync(example, "utf8"));
    changed.budgets[0].pools[0].maxConcurrent = 3;
    const changedFile = join(dir, "changed.json");
    writeFileSync(changedFile, JSON.stringify(changed));
    const reapplied = await sluice("apply", changedFile);
    expect(reapplied.stdout).toContain("Updated pool chat: maxConcurrent 4 → 3\n");
    await server.waitFor(/Catalog synced: 1 pool updated \(chat\)/);
    const chat = (await get("/api/v1/pools/chat")).json<{ data: PoolBody }>().data;
    expect(chat.max_concurrent).toBe(3);

    server.child.kill("SIGHUP");
    await server.waitFor(/Received SIGHUP; re-reading the catalog\.\nCatalog synced: no changes\n/);

    const stopped = await server.stop("SIGTERM");
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toBe("");
    expect(stopped.stdout).toContain(
      [
        "Received SIGTERM; shutting down.",
        "Stopped accepting connections; waiting up to 10000 ms for 0 in-flight requests",
        "All requests finished",
      ].join("\n"),
    );
    expect(stopped.stdout).toMatch(
      /Closed the governor\nSaved \d+ metric buckets?\nClosed the database\nStopped\.\n$/,
    );
  });

  it("status shows the applied pools and their limits", async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    await runSluice(CREATE_ACME, env);
    await runSluice(["apply", join(REPO_ROOT, "examples/sluice.config.json")], env);
    const status = await runSluice(["status"], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Team acme "Acme" (id 1): 1 budget, 2 pools');
    expect(status.stdout).toContain(
      "Budget local-llm (id 1): origin max 6 concurrent, 3 unallocated",
    );
    expect(status.stdout).toContain(
      'chat "Chat" → http://127.0.0.1:11434: max 4 concurrent, queue 16 (wait up to 30000 ms), 600 rpm, reserved 2, key required',
    );
  });

  it("a second SIGTERM exits at once, even with a request still in flight", async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    // An origin that never answers: the proxied request stays in flight.
    const origin = createServer(() => {});
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    try {
      const { port: originPort } = origin.address() as AddressInfo;
      await runSluice(CREATE_ACME, env);
      const config = join(dir, "hang.json");
      writeFileSync(
        config,
        JSON.stringify({
          team: "acme",
          pools: [
            {
              name: "Hang",
              subdomain: "hang",
              origin: `http://127.0.0.1:${originPort}`,
              maxConcurrent: 1,
              requireKey: false,
            },
          ],
        }),
      );
      expect((await runSluice(["apply", config], env)).code).toBe(0);
      server = startSluice(["serve", "--port", "0", "--shutdown-grace-ms", "60000"], env);
      const [, port] = await server.waitFor(/Listening on 127\.0\.0\.1:(\d+)/);
      const seen = waitUntilOriginSees(origin);
      const hanging = httpRequest({
        port: Number(port),
        path: "/slow",
        host: `hang.pools.localhost:${port}`,
      }).catch(() => null);
      await seen;
      server.child.kill("SIGTERM");
      await server.waitFor(/waiting up to 60000 ms for 1 in-flight request/);
      const secondAt = Date.now();
      const stopped = await server.stop("SIGTERM");
      expect(Date.now() - secondAt).toBeLessThan(5_000);
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toContain("Received SIGTERM again; exiting without waiting.");
      await hanging;
    } finally {
      origin.closeAllConnections();
      origin.close();
    }
  });

  it("serve on a taken port fails with a readable message", async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    server = startSluice(["serve", "--port", "0"], env);
    const [, port] = await server.waitFor(/Listening on 127\.0\.0\.1:(\d+)/);
    const second = await runSluice(
      ["serve", "--port", port!, "--data-dir", join(dir, "second")],
      env,
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `Error: Cannot listen on 127.0.0.1:${port}: the address is already in use`,
    );
    expect(second.stderr).not.toMatch(/\n\s+at /);
    // No shutdown report of a server that never ran.
    expect(second.stdout).not.toContain("Closed the");
  });

  it("a second in-memory server on the data directory is refused; a killed one leaves no lock", async () => {
    const env = cliEnv({ SLUICE_DATA_DIR: dir });
    server = startSluice(["serve", "--port", "0"], env);
    await server.waitFor(/Listening on/);
    const second = await runSluice(["serve", "--port", "0"], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `Error: Another Sluice server is already serving the data directory ${dir}.`,
    );
    expect(second.stdout).not.toContain("Listening on");
    // kill -9 runs no clean-up: the operating system drops the lock with the process.
    await server.stop("SIGKILL");
    // Behind a reverse proxy: pool hosts are announced the way the base URL is reached.
    const publicUrls = ["--base-url", "https://sluice.example.com"];
    server = startSluice(
      ["serve", "--port", "0", ...publicUrls, "--pool-domain", "pools.example.com"],
      env,
    );
    await server.waitFor(/Pool proxy: {2}https:\/\/<pool>\.pools\.example\.com\n/);
  });
});

/** Resolves once `origin` has a request (the proxy forwarded it). */
async function waitUntilOriginSees(origin: Server): Promise<void> {
  await new Promise<void>((resolve) => origin.once("request", () => resolve()));
}
