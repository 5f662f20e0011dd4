import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresCatalog } from "../../adapters/postgres/open-postgres-catalog.js";
import { TcpProxy } from "../redis/tcp-proxy.js";
import { createTestDatabase, requirePostgres, type TestDatabase } from "../support/postgres.js";

const available = await requirePostgres("catalog change notifications through an outage");
let database: TestDatabase | null = null;
afterAll(async () => {
  await database?.drop();
});

describe.runIf(available)("catalog change notifications through a PostgreSQL outage", () => {
  it("logs the loss once and the return once, not a line per reconnect attempt", async () => {
    database = await createTestDatabase("change_watch_outage");
    const proxy = await TcpProxy.start(new URL(database.url));
    const through = new URL(database.url);
    through.port = String(proxy.port);
    const lines: string[] = [];
    const catalog = await openPostgresCatalog({
      url: through.toString(),
      log: (line) => lines.push(line),
      timeoutMs: 5_000,
    });
    try {
      await proxy.stop();
      // Three or four reconnect attempts, one a second, all refused.
      await sleep(3_500);
      expect(lines).toEqual([
        expect.stringMatching(
          /^Catalog change notifications lost \(.+\); reconnecting every second/,
        ),
      ]);
      await proxy.resume();
      const startedAt = Date.now();
      while (!lines.includes("Catalog change notifications are back")) {
        expect(Date.now() - startedAt).toBeLessThan(5_000);
        await sleep(50);
      }
      expect(lines).toHaveLength(2);
      // Listening again: its session is back on the server.
      const { rows } = await catalog.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'LISTEN sluice_catalog' AND datname = current_database()",
      );
      expect(rows[0]?.n).toBe(1);
    } finally {
      await catalog.close();
      await proxy.stop();
    }
  });
});
