import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
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

const available = await requirePostgres("a PostgreSQL fleet as an operator runs it");
const { database, running, dirs } = serveProcesses("pg_operator");

const KEY = randomBytes(32).toString("base64");
const OTHER_KEY = randomBytes(32).toString("base64");

/** A server of the fleet on `url`, each with a data directory of its own, as on its own machine. */
async function serve(
  url: string,
  extra: string[] = [],
): Promise<{ server: RunningSluice; base: string }> {
  const server = startSluice(
    [
      "serve",
      "--port",
      "0",
      "--data-dir",
      join(dirs.dir, randomBytes(4).toString("hex")),
      ...extra,
    ],
    cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url }),
  );
  running.push(server);
  const [, port] = await server.waitFor(/Listening on 127\.0\.0\.1:(\d+)/);
  return { server, base: `http://localhost:${port}` };
}

describe.runIf(available)("a PostgreSQL fleet as an operator runs it", () => {
  it("refuses a server or command with another SLUICE_SECRET_KEY before anything is sealed", async () => {
    const { url } = await database();
    // Nothing sealed yet: no credential, no signing secret, no database URL.
    expect(
      (await runSluice(CREATE_ACME, cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url })))
        .code,
    ).toBe(0);
    await serve(url);

    const other = cliEnv({ SLUICE_SECRET_KEY: OTHER_KEY, SLUICE_DATABASE_URL: url });
    const server = await runSluice(["serve", "--port", "0", "--data-dir", dirs.dir], other);
    expect(server.code).toBe(2);
    expect(server.stderr.trim()).toBe(
      "Error: SLUICE_SECRET_KEY is not the key of this database's fleet: it cannot open the key check " +
        "sealed by the first server or command that used the database. Give every server and command " +
        "of the fleet the same SLUICE_SECRET_KEY.",
    );
    expect(server.stdout).not.toMatch(/Listening on/);
    // Nor may a command seal a credential the fleet could not open.
    const file = join(dirs.dir, "chat.json");
    writeFileSync(
      file,
      JSON.stringify({
        team: "acme",
        pools: [
          {
            name: "Chat",
            subdomain: "chat",
            origin: "http://127.0.0.1:9",
            maxConcurrent: 1,
            credential: { header: "authorization", valueFromEnv: "CHAT_AUTH" },
          },
        ],
      }),
    );
    const applied = await runSluice(["apply", file], { ...other, CHAT_AUTH: "Bearer sk-x" });
    expect(applied.code).toBe(2);
    expect(applied.stderr).toMatch(/is not the key of this database's fleet/);
    // The fleet's key still works.
    expect(
      (
        await runSluice(["apply", file], {
          ...other,
          SLUICE_SECRET_KEY: KEY,
          CHAT_AUTH: "Bearer sk-x",
        })
      ).code,
    ).toBe(0);
  });

  it("refuses a server whose Redis target differs from the serving fleet's, and takes it once they stopped", async () => {
    const { url } = await database();
    const [ours, theirs] = [uniquePrefix("pg_operator_a"), uniquePrefix("pg_operator_b")];
    try {
      const redis = (prefix: string) => ["--redis-url", REDIS_URL, "--redis-prefix", prefix];
      const first = await serve(url, redis(ours));
      await serve(url, redis(ours));
      const other = await runSluice(
        ["serve", "--port", "0", "--data-dir", dirs.dir, ...redis(theirs)],
        cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url }),
      );
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(
        new RegExp(
          `^Error: Sluice servers sharing their slots through redis://127\\.0\\.0\\.1:6379/0 prefix ${ours} already serve this PostgreSQL catalog; this one uses redis://127\\.0\\.0\\.1:6379/0 prefix ${theirs}, so it would not share their limits`,
        ),
      );
      expect(other.stdout).not.toMatch(/Listening on/);
      // Once the fleet stopped (a kill -9 too ends its sessions), the new target is taken.
      for (const server of running.splice(0))
        await server.stop(server === first.server ? "SIGKILL" : "SIGTERM");
      await serve(url, redis(theirs));
    } finally {
      await deleteKeys(ours);
      await deleteKeys(theirs);
    }
  });

  it("lets a server that keeps its slots in memory serve a PostgreSQL catalog only alone", async () => {
    const { url } = await database();
    const redis = ["--redis-url", REDIS_URL, "--redis-prefix", uniquePrefix("pg_operator_m")];
    const refused = async (extra: string[]) => {
      const result = await runSluice(
        ["serve", "--port", "0", "--data-dir", dirs.dir, ...extra],
        cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url }),
      );
      expect(result.code).toBe(1);
      expect(result.stdout).not.toMatch(/Listening on/);
      return result.stderr;
    };
    const alone = await serve(url);
    // A second in-memory server would admit every pool's full limit on top of the first's.
    expect(await refused([])).toMatch(
      /^Error: A Sluice server already serves this PostgreSQL catalog; this one keeps its slots in memory/,
    );
    // A Redis server cannot share limits with it either.
    expect(await refused(redis)).toMatch(
      /^Error: A Sluice server that keeps its slots in memory already serves this PostgreSQL catalog/,
    );
    // Once it stopped (kill -9 ends its session too), Redis servers may form a fleet, which an
    // in-memory server may not join.
    await alone.server.stop("SIGKILL");
    running.splice(0);
    await serve(url, redis);
    await serve(url, redis);
    expect(await refused([])).toMatch(
      /^Error: Sluice servers sharing their slots through redis:\/\/127\.0\.0\.1:6379\/0 prefix \S+ already serve this PostgreSQL catalog; this one keeps its slots in memory/,
    );
  });

  it("says a fleet's sign-in link needs the fleet's URL when none was given", async () => {
    const { url } = await database();
    const env = cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url });
    expect((await runSluice(CREATE_ACME, env)).code).toBe(0);
    const link = ["user", "sign-in-link", "--email", "ada@example.com"];
    const bare = await runSluice(link, env);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toMatch(/^ {2}http:\/\/localhost:8080\/sign-in\/link\?token=slc_sil_/m);
    expect(bare.stderr.trim()).toBe(
      "Note: the link starts with http://localhost:8080, the default; give the fleet's URL with --base-url or SLUICE_BASE_URL.",
    );
    const given = await runSluice([...link, "--base-url", "https://sluice.example.com"], env);
    expect(given.stdout).toMatch(/^ {2}https:\/\/sluice\.example\.com\/sign-in\/link\?token=/m);
    expect(given.stderr).toBe("");
  });

  it("answers /readyz 503 catalog unreachable while PostgreSQL is, and ready once it is back", async () => {
    const { url } = await database();
    const proxy = await TcpProxy.start(new URL(url));
    const through = new URL(url);
    through.port = String(proxy.port);
    try {
      const { base } = await serve(through.toString());
      const readiness = async () => {
        const response = await fetch(`${base}/readyz`);
        return {
          status: response.status,
          body: (await response.json()) as { checks: Record<string, string> },
        };
      };
      expect(await readiness()).toMatchObject({ status: 200, body: { checks: { catalog: "ok" } } });
      await proxy.stop();
      expect(await readiness()).toMatchObject({
        status: 503,
        body: { checks: { catalog: "unreachable" } },
      });
      // Anyone may call the Lock API: its 503 must not name the database's address.
      const lock = await fetch(`${base}/pools/chat/lock/acquire`, {
        method: "POST",
        headers: { "x-svc-key": `slc_key_${"a".repeat(43)}` },
      });
      expect(lock.status).toBe(503);
      const answer = (await lock.json()) as { error: string; message: string };
      expect(answer).toEqual({
        error: "store_unavailable",
        message: "catalog: the PostgreSQL catalog database is unavailable (ECONNREFUSED).",
      });
      await proxy.resume();
      expect(await readiness()).toMatchObject({ status: 200, body: { checks: { catalog: "ok" } } });
    } finally {
      await proxy.stop();
    }
  });

  it("answers a pool's metrics with the counts of every server, on every server", async () => {
    const { url } = await database();
    const env = cliEnv({ SLUICE_SECRET_KEY: KEY, SLUICE_DATABASE_URL: url });
    expect((await runSluice(CREATE_ACME, env)).code).toBe(0);
    const file = join(dirs.dir, "metrics.json");
    writeFileSync(
      file,
      JSON.stringify({
        team: "acme",
        pools: [
          { name: "Chat", subdomain: "chat", origin: "http://127.0.0.1:9", maxConcurrent: 4 },
        ],
      }),
    );
    expect((await runSluice(["apply", file], env)).code).toBe(0);
    const token = JSON.parse(
      (
        await runSluice(
          [
            "token",
            "create",
            "--team",
            "acme",
            "--user",
            "ada@example.com",
            "--name",
            "ops",
          ].concat(["--abilities", "all", "--lifetime", "1mo", "--json"]),
          env,
        )
      ).stdout,
    ).token as string;
    const poolKey = JSON.parse(
      (await runSluice(["key", "create", "--pool", "chat", "--json"], env)).stdout,
    ).key as string;
    // A fleet shares its slots through Redis (an in-memory server serves a catalog alone).
    const prefix = uniquePrefix("pg_operator_metrics");
    const redis = ["--redis-url", REDIS_URL, "--redis-prefix", prefix];
    const servers = await Promise.all(
      [0, 1, 2].map(() => serve(url, [...redis, "--metrics-flush-ms", "200"])),
    );
    onTestFinished(() => deleteKeys(prefix));

    // 1, 2 and 3 calls through the Lock API of the three servers.
    for (const [index, { base }] of servers.entries()) {
      for (let call = 0; call <= index; call++) {
        const acquired = await fetch(`${base}/pools/chat/lock/acquire`, {
          method: "POST",
          headers: { "x-svc-key": poolKey },
        });
        expect(acquired.status).toBe(200);
        const { slotId } = (await acquired.json()) as { slotId: string };
        const released = await fetch(`${base}/pools/chat/lock/${slotId}/release`, {
          method: "POST",
          headers: { "x-svc-key": poolKey },
        });
        expect(released.status).toBe(200);
      }
    }
    const requestsSeenBy = async (base: string) => {
      const response = await fetch(`${base}/api/v1/pools/chat/metrics`, {
        headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      });
      return ((await response.json()) as { requests: number }).requests;
    };
    const deadline = Date.now() + 5_000;
    let seen: number[] = [];
    while (Date.now() < deadline) {
      seen = await Promise.all(servers.map(({ base }) => requestsSeenBy(base)));
      if (seen.every((requests) => requests === 6)) break;
      await sleep(100);
    }
    expect(seen).toEqual([6, 6, 6]);
  });
});
