import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase, schemaVersion } from "../../adapters/sqlite/database.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../adapters/sqlite/migrations.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { SqliteMetricsStore } from "../../adapters/sqlite/sqlite-metrics-store.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { emptyMetricCounts } from "../../src/metrics/types.js";
import { poolInput, testSecretKey } from "../catalog/fixtures.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";
import { tempDirs } from "./temp-dir.js";

const dirs = tempDirs();

const open: { close(): void }[] = [];
afterEach(async () => {
  for (const handle of open.splice(0)) handle.close();
  dirs.cleanup();
});

function storeAt(filename: string, clock = new ManualClock()): SqliteCatalogStore {
  const store = new SqliteCatalogStore({ filename, clock });
  open.push(store);
  return store;
}

/** A catalog with a team, a token, a signing pool with a credential and a key: all the secrets. */
async function seed(store: SqliteCatalogStore, secretKey: Buffer) {
  const clock = new ManualClock();
  const catalog = new CatalogService({ store, secretBox: new SecretBox(secretKey), clock });
  const { team, owner } = await catalog.createTeamWithOwner({
    teamName: "Visible Team Marker",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  const credential = "sk-live-UPSTREAM-credential-0123456789";
  await store.upsertPool(
    team.id,
    poolInput({
      originSigning: true,
      credential: catalog.sealCredential("authorization", credential),
      readMethods: ["POST"],
      readPaths: { POST: ["/v1/search"] },
    }),
  );
  const token = await catalog.createApiToken({
    teamId: team.id,
    actorUserId: owner.id,
    name: "CI",
    abilities: ["keys:write"],
    lifetime: "1y",
  });
  const key = await catalog.mintPoolKey({ teamId: team.id, subdomain: "llm", access: "read" });
  return { catalog, team, credential, token, key };
}

function fileBytes(path: string): Buffer {
  return existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
}

describe("SQLite catalog on disk", () => {
  it("keeps no plaintext token, key, credential or signing secret in the file or the WAL", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const store = storeAt(filename);
    const { credential, token, key } = await seed(store, testSecretKey());
    const secrets = [token.plaintext, key.plaintext, key.signingSecret!, credential];
    const check = () => {
      const bytes = Buffer.concat([
        fileBytes(filename),
        fileBytes(`${filename}-wal`),
        fileBytes(`${filename}-shm`),
      ]);
      // The search works on these bytes: things stored in clear are found.
      expect(bytes.includes("Visible Team Marker")).toBe(true);
      expect(bytes.includes(hashSecret(key.plaintext))).toBe(true);
      for (const secret of secrets) {
        expect(bytes.includes(secret)).toBe(false);
        // Also no fragment long enough to matter (the key body without its prefix).
        expect(bytes.includes(secret.slice(8))).toBe(false);
      }
    };
    expect(fileBytes(`${filename}-wal`).length).toBeGreaterThan(0);
    check();
    store.database.pragma("wal_checkpoint(TRUNCATE)");
    check();
  });

  it("keeps the catalog across reopening, secrets usable with the same key", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const secretKey = testSecretKey();
    const first = storeAt(filename);
    const { token, key, credential, team } = await seed(first, secretKey);
    first.close();

    const reopened = storeAt(filename);
    const catalog = new CatalogService({
      store: reopened,
      secretBox: new SecretBox(secretKey),
      clock: new ManualClock(),
    });
    expect((await catalog.authenticateApiToken(token.plaintext)).team).toEqual(team);
    const pool = (await reopened.findPoolBySubdomain("llm"))!;
    expect(pool.readPaths).toEqual({ POST: ["/v1/search"] });
    expect(pool.originSigning).toBe(true);
    expect(catalog.decryptCredential(pool)?.value).toBe(credential);
    const verified = await catalog.verifyPoolKey(pool, key.plaintext);
    expect(verified).toEqual(key.key);
    expect(catalog.decryptSigningSecret(verified!)).toBe(key.signingSecret);
  });

  it("lets a second connection see this one's changes through changeMarker", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const writer = storeAt(filename);
    const reader = storeAt(filename);
    const team = await writer.createTeam({ name: "A", slug: "a" });

    const before = await reader.changeMarker();
    expect(await reader.changeMarker()).toBe(before);
    const writerBefore = await writer.changeMarker();
    await writer.upsertPool(team.id, poolInput());
    expect(await writer.changeMarker()).not.toBe(writerBefore);
    const after = await reader.changeMarker();
    expect(after).not.toBe(before);
    expect((await reader.findPoolBySubdomain("llm"))?.teamId).toBe(team.id);
    expect(await reader.changeMarker()).toBe(after);

    await reader.upsertPool(team.id, poolInput({ maxConcurrent: 3 }));
    expect((await writer.findPoolBySubdomain("llm"))?.maxConcurrent).toBe(3);
  });

  it("refuses a subdomain another connection gave to another team", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const one = storeAt(filename);
    const two = storeAt(filename);
    const a = await one.createTeam({ name: "A", slug: "a" });
    const b = await one.createTeam({ name: "B", slug: "b" });
    await one.upsertPool(a.id, poolInput());
    await expect(two.upsertPool(b.id, poolInput())).rejects.toThrow(/taken/);
  });

  it("deletes a pool's metrics and access log with the pool, and only that pool's", async () => {
    const db = openSluiceDatabase(join(dirs.make(), "sluice.db"));
    open.push(db);
    const store = new SqliteCatalogStore({ database: db });
    const metrics = new SqliteMetricsStore(db);
    const accessLog = new SqliteAccessLogStore(db);
    const team = await store.createTeam({ name: "A", slug: "a" });
    const chat = await store.upsertPool(team.id, poolInput({ subdomain: "chat" }));
    await store.upsertPool(team.id, poolInput({ subdomain: "embed" }));
    for (const pool of ["chat", "embed"]) {
      await metrics.saveBuckets([{ pool, start: 60_000, ...emptyMetricCounts(), requests: 3 }]);
      await accessLog.insert([accessLogEntry({ pool, at: 60_500 })]);
    }
    // Deleted (and re-created) while no server runs: the new pool starts with no history.
    expect(await store.deletePool(team.id, chat.id)).toBe(true);
    await store.upsertPool(team.id, poolInput({ subdomain: "chat" }));
    expect((await metrics.loadBuckets(0)).map((bucket) => bucket.pool)).toEqual(["embed"]);
    const everything = { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 10 };
    expect(await accessLog.list("chat", everything)).toEqual([]);
    expect(await accessLog.list("embed", everything)).toHaveLength(1);
  });

  it("stores every entry of a large access log batch, every field, in append order", async () => {
    const db = openSluiceDatabase(join(dirs.make(), "sluice.db"));
    open.push(db);
    const accessLog = new SqliteAccessLogStore(db);
    // More than two multi-row statements' worth, and a remainder written row by row; all in
    // one millisecond, so only the append order tells them apart.
    const batch = Array.from({ length: 70 }, (_, index) =>
      accessLogEntry({
        at: 60_500,
        keyId: index,
        outcome: index % 2 === 0 ? "admitted" : "rejected",
        reason: index % 2 === 0 ? null : "queue_full",
        queuedMs: index * 3,
        remoteAddress: index % 5 === 0 ? null : `10.0.0.${index}`,
        source: index % 3 === 0 ? "proxy" : "lock",
        upstreamStatus: index % 3 === 0 ? 200 + index : null,
      }),
    );
    await accessLog.insert(batch);
    const listed = await accessLog.list("llm", {
      from: 0,
      to: Number.MAX_SAFE_INTEGER,
      limit: 100,
    });
    // Newest first: within one millisecond, the later append.
    expect(listed).toEqual([...batch].reverse());
  });

  it("shares an open database without closing it", async () => {
    const db = openSluiceDatabase(join(dirs.make(), "sluice.db"));
    open.push(db);
    const store = new SqliteCatalogStore({ database: db });
    await store.createTeam({ name: "A", slug: "a" });
    await store.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT count(*) FROM teams").pluck().get()).toBe(1);
  });
});

describe("SQLite database setup", () => {
  it("configures WAL, foreign keys, busy timeout and synchronous=NORMAL", async () => {
    const db = openSluiceDatabase(join(dirs.make(), "nested", "dir", "sluice.db"));
    open.push(db);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5_000);
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
  });

  it("applies migrations once: reopening is a no-op that keeps data", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const first = openSluiceDatabase(filename);
    expect(schemaVersion(first)).toBe(LATEST_SCHEMA_VERSION);
    first.prepare("INSERT INTO teams (name, slug) VALUES ('A', 'a')").run();
    first.close();
    for (let round = 0; round < 3; round++) {
      const again = openSluiceDatabase(filename);
      expect(schemaVersion(again)).toBe(LATEST_SCHEMA_VERSION);
      expect(again.prepare("SELECT count(*) FROM teams").pluck().get()).toBe(1);
      again.close();
    }
  });

  it("keeps the access log through the migration that adds the outcome unavailable", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const version3 = MIGRATIONS.filter((migration) => migration.version <= 3);
    const before = openSluiceDatabase(filename, { migrations: version3 });
    // Written as the store of that version wrote them (later columns did not exist yet).
    const insertV3 = before.prepare(
      `INSERT INTO access_log (pool, at, key_id, outcome, reason, queued_ms, remote_address, source)
       VALUES ('llm', ?, 1, ?, NULL, 0, '127.0.0.1', 'lock')`,
    );
    insertV3.run(1_000, "aborted");
    expect(() => insertV3.run(1_500, "unavailable")).toThrow(/CHECK/);
    before.close();

    const after = openSluiceDatabase(filename);
    open.push(after);
    const accessLog = new SqliteAccessLogStore(after);
    await accessLog.insert([accessLogEntry({ at: 2_000, outcome: "unavailable", queuedMs: 40 })]);
    const everything = { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 10 };
    expect(await accessLog.list("llm", everything)).toEqual([
      accessLogEntry({ at: 2_000, outcome: "unavailable", queuedMs: 40 }),
      accessLogEntry({ at: 1_000, outcome: "aborted" }),
    ]);
    // The index the newest-first reads use is back.
    const indexes = after.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").pluck();
    expect(indexes.all()).toContain("access_log_by_pool_time");
  });

  it("adds the upstream status to the access log in place: older rows read as no answer", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const version9 = MIGRATIONS.filter((migration) => migration.version <= 9);
    const before = openSluiceDatabase(filename, { migrations: version9 });
    before
      .prepare(
        `INSERT INTO access_log (pool, at, key_id, outcome, reason, queued_ms, remote_address, source)
         VALUES ('llm', 1000, 1, 'admitted', NULL, 0, '127.0.0.1', 'proxy')`,
      )
      .run();
    before.close();

    const after = openSluiceDatabase(filename);
    open.push(after);
    const accessLog = new SqliteAccessLogStore(after);
    await accessLog.insert([accessLogEntry({ at: 2_000, source: "proxy", upstreamStatus: 429 })]);
    const everything = { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 10 };
    expect(await accessLog.list("llm", everything)).toEqual([
      accessLogEntry({ at: 2_000, source: "proxy", upstreamStatus: 429 }),
      accessLogEntry({ at: 1_000, source: "proxy", upstreamStatus: null }),
    ]);
    // Only statuses HTTP defines.
    const insertRaw = after.prepare(
      `INSERT INTO access_log (pool, at, outcome, queued_ms, source, upstream_status)
       VALUES ('llm', 3000, 'admitted', 0, 'proxy', ?)`,
    );
    expect(() => insertRaw.run(600)).toThrow(/CHECK/);
  });

  it("rolls a failed migration back whole and keeps the previous version", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const broken = [
      ...MIGRATIONS,
      {
        version: MIGRATIONS.length + 1,
        name: "broken",
        up: "CREATE TABLE half_done (id INTEGER); INSERT INTO no_such_table VALUES (1);",
      },
    ];
    expect(() => openSluiceDatabase(filename, { migrations: broken })).toThrow();
    const db = new Database(filename);
    open.push(db);
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(
      db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").pluck().get(),
    ).toBe(0);
  });

  it("refuses a database from a newer schema", async () => {
    const filename = join(dirs.make(), "sluice.db");
    openSluiceDatabase(filename).close();
    const db = new Database(filename);
    db.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openSluiceDatabase(filename)).toThrow(InvalidArgumentError);
  });

  it("refuses a migration list with gaps", async () => {
    const gap = [MIGRATIONS[0]!, { version: 3, name: "skipped", up: "SELECT 1" }];
    expect(() => openSluiceDatabase(join(dirs.make(), "x.db"), { migrations: gap })).toThrow(
      InvalidArgumentError,
    );
  });
});
