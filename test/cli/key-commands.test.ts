import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDataDir } from "../../adapters/server/data-dir.js";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import { poolInput } from "../catalog/fixtures.js";
import { sluiceIn } from "./capture-io.js";
import { CREATE_ACME, tempDir } from "./cli-process.js";

let dir: string;
let cleanup: () => void;

const sluice = (...args: string[]) => sluiceIn(dir, args);

async function withCatalog<T>(work: (catalog: CatalogService) => T | Promise<T>): Promise<T> {
  const data = await openDataDir({ dataDir: dir });
  try {
    return await work(data.catalog);
  } finally {
    data.close();
  }
}

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("sluice-key-cli-"));
  expect((await sluice(...CREATE_ACME)).code).toBe(0);
  await withCatalog(async ({ store }) => {
    const acme = (await store.findTeamBySlug("acme"))!;
    await store.upsertPool(acme.id, poolInput({ subdomain: "chat", readMethods: ["POST"] }));
    await store.upsertPool(acme.id, poolInput({ subdomain: "signed", originSigning: true }));
  });
});
afterEach(async () => cleanup());

describe("sluice key create", () => {
  it("prints the key once; it works on its pool and only its hash is stored", async () => {
    const result = await sluice("key", "create", "--pool", "chat", "--label", "laptop");
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe("Created write key 1 for pool chat; never expires.");
    expect(lines[1]).toBe("Copy it now, it is not shown again:");
    const plaintext = lines[3]!.trim();
    expect(plaintext).toMatch(/^slc_key_/);
    await withCatalog(async (catalog) => {
      expect(await catalog.verifyPoolKey("chat", plaintext)).toMatchObject({
        id: 1,
        label: "laptop",
      });
      expect(JSON.stringify(await catalog.store.listPoolKeys(1))).not.toContain(plaintext);
    });
  });

  it("--json prints the Control API's PoolKey with the key (and signing secret) once", async () => {
    const result = await sluice(
      ...["key", "create", "--pool", "signed", "--access", "read", "--expires", "7d", "--json"],
    );
    expect(result.code).toBe(0);
    const key = JSON.parse(result.stdout);
    expect(key).toEqual({
      id: 1,
      label: "",
      last_four: key.key.slice(-4),
      access: "read",
      allowed_methods: ["GET", "HEAD", "OPTIONS"],
      expires_at: expect.any(String),
      revoked_at: null,
      created_at: expect.any(String),
      key: expect.stringMatching(/^slc_key_/),
      signing_secret: expect.stringMatching(/^slc_sig_/),
    });
    expect(Date.parse(key.expires_at) - Date.parse(key.created_at)).toBe(7 * 86_400_000);
  });

  it("applies the Control API's rules, naming the flags", async () => {
    const cases: [string[], string][] = [
      [["--access", "admin"], "--access: Must be one of read, write."],
      [["--expires", "2d"], "--expires: Must be one of none, 1h, 24h, 7d."],
      [["--expires-at", "2020-01-01T00:00:00Z"], "--expires-at: Must be in the future."],
      [["--label", "x".repeat(61)], "--label: Must be at most 60 characters."],
      [["--label", "bell\u0007"], "--label: Must be plain text"],
    ];
    for (const [flags, message] of cases) {
      const result = await sluice("key", "create", "--pool", "chat", ...flags);
      expect(result.code, flags.join(" ")).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe("");
    }
    await withCatalog(async ({ store }) => expect(await store.listPoolKeys(1)).toEqual([]));
  });

  it("names an unknown pool, exit 2", async () => {
    const result = await sluice("key", "create", "--pool", "nope");
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain('No pool with subdomain "nope".');
  });
});

describe("sluice key list and revoke", () => {
  it("lists metadata only, revoked keys included; a revoked key stops working", async () => {
    const created = JSON.parse(
      (await sluice("key", "create", "--pool", "chat", "--label", "ci", "--json")).stdout,
    );
    await sluice("key", "create", "--pool", "chat", "--expires", "1h");
    expect(await sluice("key", "revoke", "--pool", "chat", "--id", "1")).toEqual({
      code: 0,
      stdout: "Revoked key 1 of pool chat.\n",
      stderr: "",
    });
    await withCatalog(async (catalog) =>
      expect(await catalog.verifyPoolKey("chat", created.key)).toBeNull(),
    );

    const text = await sluice("key", "list", "--pool", "chat");
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(
      new RegExp(`^  1  "ci"  …${created.last_four}  write  created \\S+, revoked \\S+$`),
    );
    expect(lines[2]).toMatch(
      /^ {2}2 {2}\(no label\) {2}…\S{4} {2}write {2}created \S+, expires \S+$/,
    );
    expect(text.stdout).not.toContain(created.key);

    const json = JSON.parse((await sluice("key", "list", "--pool", "chat", "--json")).stdout);
    expect(json.map((key: { id: number }) => key.id)).toEqual([1, 2]);
    expect(json[0]).toMatchObject({ id: 1, label: "ci", revoked_at: expect.any(String) });
    for (const key of json) {
      expect(key).not.toHaveProperty("key");
      expect(key).not.toHaveProperty("signing_secret");
    }
    const hashes = await withCatalog(async ({ store }) =>
      (await store.listPoolKeys(1)).map((key) => key.keyHash),
    );
    for (const hash of hashes) expect(JSON.stringify(json)).not.toContain(hash);
  });

  it("says so for a pool without keys, a key revoked twice and an unknown id", async () => {
    expect((await sluice("key", "list", "--pool", "chat")).stdout).toBe(
      'Pool chat has no keys. Create one with "sluice key create --pool chat".\n',
    );
    await sluice("key", "create", "--pool", "chat");
    await sluice("key", "revoke", "--pool", "chat", "--id", "1");
    const again = await sluice("key", "revoke", "--pool", "chat", "--id", "1");
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Key 1 of pool chat was already revoked on \S+\.\n$/);
    // A key of another pool is unknown here, and stays live.
    await sluice("key", "create", "--pool", "signed");
    expect(await sluice("key", "revoke", "--pool", "chat", "--id", "2")).toEqual({
      code: 1,
      stdout: "",
      stderr: "Error: pool chat has no key with id 2.\n",
    });
    await withCatalog(async ({ store }) =>
      expect((await store.getPoolKey(2, 2))?.revokedAt).toBeNull(),
    );
    const bad = await sluice("key", "revoke", "--pool", "chat", "--id", "x");
    expect(bad).toMatchObject({
      code: 2,
      stderr: 'Error: --id must be a key id such as 3 (got "x").\n',
    });
  });

  it("list reads without creating a catalog", async () => {
    const result = await sluice("key", "list", "--pool", "chat", "--data-dir", `${dir}/missing`);
    expect(result.code).toBe(2);
  });
});
