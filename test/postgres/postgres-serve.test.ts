import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  CREATE_ACME,
  cliEnv,
  type RunningSluice,
  runSluice,
  startSluice,
} from "../cli/cli-process.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../redis/redis-harness.js";
import { TcpProxy } from "../redis/tcp-proxy.js";
import { requirePostgres } from "../support/postgres.js";
import { serveProcesses } from "./serve-processes.js";

const available = await requirePostgres("sluice serve on PostgreSQL");
const { database, running, dirs } = serveProcesses("pg_serve");

const KEY = randomBytes(32).toString("base64");

function serve(url: string, key = KEY, extra: string[] = []): RunningSluice {
  const server = startSluice(
    ["serve", "--port", "0", "--database-url", url, ...extra],
    cliEnv({ SLUICE_SECRET_KEY: key }),
  );
  running.push(server);
  return server;
}

function applyFile(pools: object[]): string {
  const file = join(dirs.dir, `apply-${randomBytes(4).toString("hex")}.json`);
  writeFileSync(file, JSON.stringify({ team: "acme", budgets: [], pools }));
  return file;
}

const chat = {
  name: "Chat",
  subdomain: "chat",
  origin: "http://127.0.0.1:9",
  maxConcurrent: 2,
  queue: { size: 0, timeoutMs: 1000 },
  credential: { header: "authorization", valueFromEnv: "CHAT_AUTH" },
};

describe.runIf(available)("sluice serve --database-url", () => {
  it("serves a pool applied through the CLI on every server within a second", async () => {
    const { url } = await database();
    const env = cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url });
    expect((await runSluice(CREATE_ACME, env)).code).toBe(0);
    // Servers of a fleet share their slots through Redis (in memory, a server serves alone).
    const prefix = uniquePrefix("pg_serve");
    onTestFinished(() => deleteKeys(prefix));
    const redis = ["--redis-url", REDIS_URL, "--redis-prefix", prefix];
    const servers = [serve(url, KEY, redis), serve(url, KEY, redis)];
    await Promise.all(servers.map((server) => server.waitFor(/Listening on/)));
    expect(servers[0]!.stdout()).toMatch(/Catalog: PostgreSQL postgres:\/\//);

    const applied = await runSluice(["apply", applyFile([chat])], {
      ...env,
      CHAT_AUTH: "Bearer sk-test",
    });
    expect(applied).toMatchObject({ code: 0 });
    const appliedAt = Date.now();
    await Promise.all(
      servers.map((server) => server.waitFor(/Catalog synced: 1 pool defined \(chat\)/, 5_000)),
    );
    // The CLI's own process exit comes after its commit; the servers saw it by NOTIFY.
    expect(Date.now() - appliedAt).toBeLessThan(1_000);
    const status = await runSluice(["status", "--json"], env);
    expect(JSON.parse(status.stdout)[0].pools[0]).toMatchObject({
      subdomain: "chat",
      credentialHeader: "authorization",
    });
  });

  it("refuses to start, saying why, with a secret key that cannot open the stored credentials", async () => {
    const { url } = await database();
    const env = cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url });
    expect((await runSluice(CREATE_ACME, env)).code).toBe(0);
    expect(
      (await runSluice(["apply", applyFile([chat])], { ...env, CHAT_AUTH: "Bearer sk-test" })).code,
    ).toBe(0);
    const result = await runSluice(
      ["serve", "--port", "0", "--database-url", url],
      cliEnv({ SLUICE_SECRET_KEY: randomBytes(32).toString("base64") }),
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(
      /SLUICE_SECRET_KEY\) cannot open the upstream credentials stored in this database \(pool chat\)/,
    );
    expect(result.stderr).not.toContain("sk-test");
  });

  it("refuses a PostgreSQL catalog without SLUICE_SECRET_KEY", async () => {
    const { url } = await database();
    const result = await runSluice(["serve", "--port", "0", "--database-url", url], cliEnv());
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/needs SLUICE_SECRET_KEY/);
  });

  it("waits for a PostgreSQL that is down, saying so, and serves once it is back", async () => {
    const { url } = await database();
    const proxy = await TcpProxy.start(new URL(url));
    await proxy.stop();
    const through = new URL(url);
    through.port = String(proxy.port);
    const server = serve(through.toString());
    try {
      await server.waitFor(/PostgreSQL at postgres:\/\/\S+ does not answer .*retrying in \d+ ms/);
      await proxy.resume();
      await server.waitFor(/Listening on/, 15_000);
    } finally {
      await server.stop();
      await proxy.stop();
    }
  });
});
