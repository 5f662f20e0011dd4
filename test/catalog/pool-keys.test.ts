import { describe, expect, it } from "vitest";
import type { NewPoolKey } from "../../src/catalog/pool-keys.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import { InvalidArgumentError, PoolNotFoundError } from "../../src/errors.js";
import { poolInput } from "./fixtures.js";
import { catalogWithTeam, issuesOf } from "./service-fixture.js";

async function fixture() {
  const context = await catalogWithTeam();
  const pool = await context.store.upsertPool(context.team.id, poolInput());
  const mint = (fields: Omit<NewPoolKey, "teamId" | "subdomain"> = {}) =>
    context.catalog.mintPoolKey({ teamId: context.team.id, subdomain: "llm", ...fields });
  return { ...context, pool, mint };
}

describe("minting pool keys", () => {
  it("defaults to an unlabelled, non-expiring write key, stored as a hash", async () => {
    const { mint, clock, pool } = await fixture();
    const { key, plaintext, signingSecret } = await mint();
    expect(plaintext).toMatch(/^slc_key_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({
      poolId: pool.id,
      label: "",
      access: "write",
      expiresAt: null,
      revokedAt: null,
      createdAt: clock.now(),
      signingSecret: null,
      requestSecret: null,
      lastFour: plaintext.slice(-4),
      keyHash: hashSecret(plaintext),
    });
    expect(signingSecret).toBeUndefined();
  });

  it("treats null fields as omitted", async () => {
    const { mint } = await fixture();
    const { key } = await mint({ label: null, access: null, expiresPreset: null, expiresAt: null });
    expect(key).toMatchObject({ label: "", access: "write", expiresAt: null });
  });

  it("accepts a 60-character label and refuses 61", async () => {
    const { mint } = await fixture();
    expect((await mint({ label: "x".repeat(60) })).key.label).toHaveLength(60);
    expect((await mint({ label: "🔑".repeat(60) })).key.label).toBe("🔑".repeat(60));
    expect(await issuesOf(() => mint({ label: "x".repeat(61) }))).toEqual({
      label: ["Must be at most 60 characters."],
    });
    expect(Object.keys(await issuesOf(() => mint({ label: 42 })))).toEqual(["label"]);
  });

  it("refuses control characters, bidirectional overrides and lone surrogates in a label", async () => {
    const { mint } = await fixture();
    const broken = ["\ud800", "a\udc00b", "\udfff\ud800", "end\ud83d"];
    for (const label of [
      "a\u0000b",
      "red\u001b[31m",
      "line\nbreak",
      "del\u007f",
      "c1\u009b",
      "invoice\u202efdp.exe",
      "isolate\u2067x\u2069",
      ...broken,
    ]) {
      expect(await issuesOf(() => mint({ label })), JSON.stringify(label)).toEqual({
        label: [
          "Must be plain text: no control characters, bidirectional overrides or unpaired UTF-16 surrogates.",
        ],
      });
    }
    expect((await mint({ label: "tab-free ünïcødé 🔑" })).key.label).toBe("tab-free ünïcødé 🔑");
    // Bidirectional marks reorder nothing on their own; right-to-left labels need them.
    expect((await mint({ label: "עברית\u200f 1" })).key.label).toBe("עברית\u200f 1");
  });

  it("takes read or write access and refuses anything else", async () => {
    const { mint } = await fixture();
    expect((await mint({ access: "read" })).key.access).toBe("read");
    expect((await mint({ access: "write" })).key.access).toBe("write");
    expect(Object.keys(await issuesOf(() => mint({ access: "admin" })))).toEqual(["access"]);
    expect(Object.keys(await issuesOf(() => mint({ access: "READ" })))).toEqual(["access"]);
  });

  it("applies expiry presets from now", async () => {
    const { mint, clock } = await fixture();
    expect((await mint({ expiresPreset: "none" })).key.expiresAt).toBeNull();
    expect((await mint({ expiresPreset: "1h" })).key.expiresAt).toBe(clock.now() + 3_600_000);
    expect((await mint({ expiresPreset: "24h" })).key.expiresAt).toBe(clock.now() + 86_400_000);
    expect((await mint({ expiresPreset: "7d" })).key.expiresAt).toBe(clock.now() + 604_800_000);
    expect(Object.keys(await issuesOf(() => mint({ expiresPreset: "30d" })))).toEqual([
      "expires_preset",
    ]);
  });

  it("takes a future ISO-8601 expires_at and refuses past, present or malformed ones", async () => {
    const { mint, clock } = await fixture();
    const inOneHour = new Date(clock.now() + 3_600_000).toISOString();
    expect((await mint({ expiresAt: inOneHour })).key.expiresAt).toBe(clock.now() + 3_600_000);
    expect((await mint({ expiresAt: "2030-01-01T02:00:00+02:00" })).key.expiresAt).toBe(
      Date.UTC(2030, 0, 1),
    );
    for (const bad of [
      new Date(clock.now() - 1).toISOString(),
      new Date(clock.now()).toISOString(),
      "next week",
      "2030-02-30T00:00:00Z",
      "2030-01-01",
      1_893_456_000_000,
    ]) {
      expect(Object.keys(await issuesOf(() => mint({ expiresAt: bad }))), String(bad)).toEqual([
        "expires_at",
      ]);
    }
  });

  it("refuses expires_preset and expires_at together", async () => {
    const { mint } = await fixture();
    expect(
      await issuesOf(() => mint({ expiresPreset: "1h", expiresAt: "2030-01-01T00:00:00Z" })),
    ).toEqual({ expires_at: ["Send either expires_preset or expires_at, not both."] });
  });

  it("reports every bad field at once", async () => {
    const { mint } = await fixture();
    expect(
      Object.keys(
        await issuesOf(() => mint({ label: "x".repeat(61), access: "x", expiresPreset: "2h" })),
      ),
    ).toEqual(["label", "access", "expires_preset"]);
  });

  it("treats another team's pool as not found", async () => {
    const { catalog, store, team } = await fixture();
    const other = await catalog.createTeamWithOwner({
      teamName: "Other",
      slug: "other",
      ownerName: "Oz",
      ownerEmail: "oz@other.test",
    });
    await store.upsertPool(other.team.id, poolInput({ subdomain: "theirs" }));
    await expect(catalog.mintPoolKey({ teamId: team.id, subdomain: "theirs" })).rejects.toThrow(
      PoolNotFoundError,
    );
    await expect(catalog.mintPoolKey({ teamId: other.team.id, subdomain: "llm" })).rejects.toThrow(
      PoolNotFoundError,
    );
  });

  it("issues a signing secret only when the pool signs, stored sealed", async () => {
    const { catalog, store, team, mint } = await fixture();
    expect((await mint()).signingSecret).toBeUndefined();
    await store.upsertPool(team.id, poolInput({ originSigning: true }));
    const minted = await mint();
    expect(minted.signingSecret).toMatch(/^slc_sig_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(minted.key)).not.toContain(minted.signingSecret);
    expect(catalog.decryptSigningSecret(minted.key)).toBe(minted.signingSecret);
    expect((await mint()).signingSecret).not.toBe(minted.signingSecret);
    await store.upsertPool(team.id, poolInput({ originSigning: false }));
    expect(catalog.decryptSigningSecret((await mint()).key)).toBeNull();
  });
});

describe("verifying and revoking pool keys", () => {
  it("accepts a live key on its own pool only", async () => {
    const { catalog, store, team, pool, mint } = await fixture();
    const other = await store.upsertPool(team.id, poolInput({ subdomain: "other" }));
    const { key, plaintext } = await mint();
    expect(await catalog.verifyPoolKey(pool, plaintext)).toEqual(key);
    expect(await catalog.verifyPoolKey("llm", plaintext)).toEqual(key);
    expect(await catalog.verifyPoolKey(other, plaintext)).toBeNull();
    expect(await catalog.verifyPoolKey("other", plaintext)).toBeNull();
    expect(await catalog.verifyPoolKey("missing", plaintext)).toBeNull();
  });

  it("rejects malformed and unknown keys", async () => {
    const { catalog, pool, mint } = await fixture();
    const { plaintext } = await mint();
    expect(await catalog.verifyPoolKey(pool, undefined)).toBeNull();
    expect(await catalog.verifyPoolKey(pool, "")).toBeNull();
    expect(await catalog.verifyPoolKey(pool, `${plaintext} `)).toBeNull();
    expect(await catalog.verifyPoolKey(pool, `slc_key_${"B".repeat(43)}`)).toBeNull();
    expect(await catalog.verifyPoolKey(pool, `slc_tok_${plaintext.slice(8)}`)).toBeNull();
  });

  it("rejects a key from its expiry instant on", async () => {
    const { catalog, clock, pool, mint } = await fixture();
    const { plaintext } = await mint({ expiresPreset: "1h" });
    await clock.advance(3_599_999);
    expect(await catalog.verifyPoolKey(pool, plaintext)).not.toBeNull();
    await clock.advance(1);
    expect(await catalog.verifyPoolKey(pool, plaintext)).toBeNull();
    expect(await catalog.verifyPoolKey(pool, plaintext, clock.now() - 1)).not.toBeNull();
  });

  it("rejects a revoked key; revoking is scoped to the team's pool", async () => {
    const { catalog, team, pool, mint, clock } = await fixture();
    const { key, plaintext } = await mint();
    expect(await catalog.revokePoolKey(team.id, "llm", key.id + 1_000)).toBeUndefined();
    await expect(catalog.revokePoolKey(team.id + 1_000, "llm", key.id)).rejects.toThrow(
      PoolNotFoundError,
    );
    expect(await catalog.verifyPoolKey(pool, plaintext)).not.toBeNull();
    const revoked = await catalog.revokePoolKey(team.id, "llm", key.id);
    expect(revoked?.revokedAt).toBe(clock.now());
    expect(await catalog.verifyPoolKey(pool, plaintext)).toBeNull();
  });
});

describe("stored credentials", () => {
  it("seals an upstream credential and decrypts it for the proxy", async () => {
    const { catalog, store, team } = await fixture();
    const credential = catalog.sealCredential("Authorization", "Bearer sk-live-123");
    expect(JSON.stringify(credential)).not.toContain("sk-live-123");
    const pool = await store.upsertPool(team.id, poolInput({ credential }));
    expect(catalog.decryptCredential(pool)).toEqual({
      header: "authorization",
      value: "Bearer sk-live-123",
    });
    expect(catalog.decryptCredential({ ...pool, credential: null })).toBeNull();
  });

  it("refuses a header or value that could not be sent as they are", async () => {
    const { catalog } = await fixture();
    expect(() => catalog.sealCredential("Transfer-Encoding", "chunked")).toThrow(
      "credential.header: Cannot be transfer-encoding",
    );
    expect(() => catalog.sealCredential("x-api-key", "sk-3\r\nX-Admin: 1")).toThrow(
      InvalidArgumentError,
    );
    expect(() => catalog.sealCredential("x-api-key", " sk-3")).toThrow("credential.value:");
    expect(() => catalog.sealCredential("x-api-key", "")).toThrow("credential.value:");
    expect(() => catalog.sealCredential("x-api-key", "sk-ü")).toThrow("credential.value:");
    expect(() => catalog.sealCredential("x:api", "sk-3")).toThrow("credential.header:");
    // The proxy writes these itself: a credential there would be overwritten on the way out.
    for (const header of ["Forwarded", "X-Real-IP"]) {
      expect(() => catalog.sealCredential(header, "sk-3")).toThrow(/credential\.header: Cannot be/);
    }
    expect(catalog.sealCredential("X-Api-Key", "Token a b\tc").header).toBe("x-api-key");
  });
});
