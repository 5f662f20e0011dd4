import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createControlApp } from "../../adapters/hono/index.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { ABILITIES } from "../../src/catalog/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { MetricsRecorder } from "../../src/metrics/recorder.js";
import { poolInput, START } from "./harness.js";

/*
 * Another process (`sluice apply`, a second server) may hold the SQLite write lock for a
 * moment. Reads must keep working; writes answer 503 {message}, never a 500.
 */
describe("Control API while another connection holds the SQLite write lock", () => {
  let dir: string;
  let database: Database.Database;
  let other: Database.Database;
  let app: ReturnType<typeof createControlApp>;
  let token: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-busy-"));
    // No busy wait: the lock is refused at once, as after a busy timeout.
    database = openSluiceDatabase(join(dir, "sluice.db"), { busyTimeoutMs: 0 });
    const clock = new ManualClock(START);
    const store = new SqliteCatalogStore({ database, clock });
    const catalog = new CatalogService({ store, secretBox: new SecretBox(randomBytes(32)), clock });
    const { team, owner } = await catalog.createTeamWithOwner({
      teamName: "Acme",
      slug: "acme",
      ownerName: "Ada",
      ownerEmail: "ada@acme.test",
    });
    await store.upsertPool(team.id, poolInput());
    token = (
      await catalog.createApiToken({
        teamId: team.id,
        actorUserId: owner.id,
        name: "busy",
        abilities: ABILITIES,
        lifetime: "1y",
      })
    ).plaintext;
    app = createControlApp({ catalog, metrics: new MetricsRecorder(), clock, logError: () => {} });
    other = openSluiceDatabase(join(dir, "sluice.db"));
    other.exec("BEGIN IMMEDIATE");
  });

  afterEach(async () => {
    if (other.inTransaction) other.exec("ROLLBACK");
    other.close();
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (method: string, path: string) =>
    app.request(path, { method, headers: { authorization: `Bearer ${token}` } });

  it("still answers reads: recording the token's last use is best effort", async () => {
    // The token was never used, so this request would record its first use.
    const me = await call("GET", "/api/v1/me");
    expect(me.status).toBe(200);
    expect((await call("GET", "/api/v1/pools/llm")).status).toBe(200);
  });

  it("answers a write with 503 {message}, and succeeds once the lock is gone", async () => {
    const busy = await call("POST", "/api/v1/pools/llm/keys");
    expect(busy.status).toBe(503);
    expect(await busy.json()).toEqual({ message: expect.stringMatching(/busy.*try again/) });
    other.exec("COMMIT");
    expect((await call("POST", "/api/v1/pools/llm/keys")).status).toBe(201);
  });
});
