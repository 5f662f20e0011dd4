import { describe, expect, it } from "vitest";
import type { NewPoolKey } from "../../src/catalog/pool-keys.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import { InvalidArgumentError, PoolNotFoundError } from "../../src/errors.js";
import { poolInput } from "./fixtures.js";
import { catalogWithTeam, issuesOf } from "./service-fixture.js";

function fixture() {
  const context = catalogWithTeam();
  const pool = context.store.upsertPool(context.team.id, poolInput());
  const mint = (fields: Omit<NewPoolKey, "teamId" | "subdomain"> = {}) =>
    context.catalog.mintPoolKey({ teamId: context.team.id, subdomain: "llm", ...fields });
  return { ...context, pool, mint };
}

describe("minting pool keys", () => {
  it("defaults to an unlabelled, non-expiring write key, stored as a hash", () => {
    const { mint, clock, pool } = fixture();
    const { key, plaintext, signingSecret } = mint();
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

  it("treats null fields as omitted", () => {
    const { mint } = fixture();
    const { key } = mint({ label: null, access: null, expiresPreset: null, expiresAt: null });
    expect(key).toMatchObject({ label: "", access: "write", expiresAt: null });
  });

  it("accepts a 60-character label and refuses 61", () => {
    const { mint } = fixture();
    expect(mint({ label: "x".repeat(60) }).key.label).toHaveLength(60);
    expect(mint({ label: "🔑".repeat(60) }).key.label).toBe("🔑".repeat(60));
    expect(issuesOf(() => mint({ label: "x".repeat(61) }))).toEqual({
      label: ["Must be at most 60 characters."],
    });
    expect(Object.keys(issuesOf(() => mint({ label: 42 })))).toEqual(["label"]);
  });

  it("refuses control characters, bidirectional overrides and lone surrogates in a label", () => {
    const { mint } = fixture();
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
      expect(
        issuesOf(() => mint({ label })),
        JSON.stringify(label),
      ).toEqual({
        label: [
          "Must be plain text: no control characters, bidirectional overrides or unpaired UTF-16 surrogates.",
        ],
      });
    }
    expect(mint({ label: "tab-free ünïcødé 🔑" }).key.label).toBe("tab-free ünïcødé 🔑");
    // Bidirectional marks reorder nothing on their own; right-to-left labels need them.
    expect(mint({ label: "עברית\u200f 1" }).key.label).toBe("עברית\u200f 1");
  });

  it("takes read or write access and refuses anything else", () => {
    const { mint } = fixture();
    expect(mint({ access: "read" }).key.access).toBe("read");
    expect(mint({ access: "write" }).key.access).toBe("write");
    expect(Object.keys(issuesOf(() => mint({ access: "admin" })))).toEqual(["access"]);
    expect(Object.keys(issuesOf(() => mint({ access: "READ" })))).toEqual(["access"]);
  });

  it("applies expiry presets from now", () => {
    const { mint, clock } = fixture();
    expect(mint({ expiresPreset: "none" }).key.expiresAt).toBeNull();
    expect(mint({ expiresPreset: "1h" }).key.expiresAt).toBe(clock.now() + 3_600_000);
    expect(mint({ expiresPreset: "24h" }).key.expiresAt).toBe(clock.now() + 86_400_000);
    expect(mint({ expiresPreset: "7d" }).key.expiresAt).toBe(clock.now() + 604_800_000);
    expect(Object.keys(issuesOf(() => mint({ expiresPreset: "30d" })))).toEqual(["expires_preset"]);
  });

  it("takes a future ISO-8601 expires_at and refuses past, present or malformed ones", () => {
    const { mint, clock } = fixture();
    const inOneHour = new Date(clock.now() + 3_600_000).toISOString();
    expect(mint({ expiresAt: inOneHour }).key.expiresAt).toBe(clock.now() + 3_600_000);
    expect(mint({ expiresAt: "2030-01-01T02:00:00+02:00" }).key.expiresAt).toBe(
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
      expect(Object.keys(issuesOf(() => mint({ expiresAt: bad }))), String(bad)).toEqual([
        "expires_at",
      ]);
    }
  });

  it("refuses expires_preset and expires_at together", () => {
    const { mint } = fixture();
    expect(
      issuesOf(() => mint({ expiresPreset: "1h", expiresAt: "2030-01-01T00:00:00Z" })),
    ).toEqual({ expires_at: ["Send either expires_preset or expires_at, not both."] });
  });

  it("reports every bad field at once", () => {
    const { mint } = fixture();
    expect(
      Object.keys(
        issuesOf(() => mint({ label: "x".repeat(61), access: "x", expiresPreset: "2h" })),
      ),
    ).toEqual(["label", "access", "expires_preset"]);
  });

  it("treats another team's pool as not found", () => {
    const { catalog, store, team } = fixture();
    const other = catalog.createTeamWithOwner({
      teamName: "Other",
      slug: "other",
      ownerName: "Oz",
      ownerEmail: "oz@other.test",
    });
    store.upsertPool(other.team.id, poolInput({ subdomain: "theirs" }));
    expect(() => catalog.mintPoolKey({ teamId: team.id, subdomain: "theirs" })).toThrow(
      PoolNotFoundError,
    );
    expect(() => catalog.mintPoolKey({ teamId: other.team.id, subdomain: "llm" })).toThrow(
      PoolNotFoundError,
    );
  });

  it("issues a signing secret only when the pool signs, stored sealed", () => {
    const { catalog, store, team, mint } = fixture();
    expect(mint().signingSecret).toBeUndefined();
    store.upsertPool(team.id, poolInput({ originSigning: true }));
    const minted = mint();
    expect(minted.signingSecret).toMatch(/^slc_sig_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(minted.key)).not.toContain(minted.signingSecret);
    expect(catalog.decryptSigningSecret(minted.key)).toBe(minted.signingSecret);
    expect(mint().signingSecret).not.toBe(minted.signingSecret);
    store.upsertPool(team.id, poolInput({ originSigning: false }));
    expect(catalog.decryptSigningSecret(mint().key)).toBeNull();
  });
});

describe("verifying and revoking pool keys", () => {
  it("accepts a live key on its own pool only", () => {
    const { catalog, store, team, pool, mint } = fixture();
    const other = store.upsertPool(team.id, poolInput({ subdomain: "other" }));
    const { key, plaintext } = mint();
    expect(catalog.verifyPoolKey(pool, plaintext)).toEqual(key);
    expect(catalog.verifyPoolKey("llm", plaintext)).toEqual(key);
    expect(catalog.verifyPoolKey(other, plaintext)).toBeNull();
    expect(catalog.verifyPoolKey("other", plaintext)).toBeNull();
    expect(catalog.verifyPoolKey("missing", plaintext)).toBeNull();
  });

  it("rejects malformed and unknown keys", () => {
    const { catalog, pool, mint } = fixture();
    const { plaintext } = mint();
    expect(catalog.verifyPoolKey(pool, undefined)).toBeNull();
    expect(catalog.verifyPoolKey(pool, "")).toBeNull();
    expect(catalog.verifyPoolKey(pool, `${plaintext} `)).toBeNull();
    expect(catalog.verifyPoolKey(pool, `slc_key_${"B".repeat(43)}`)).toBeNull();
    expect(catalog.verifyPoolKey(pool, `slc_tok_${plaintext.slice(8)}`)).toBeNull();
  });

  it("rejects a key from its expiry instant on", async () => {
    const { catalog, clock, pool, mint } = fixture();
    const { plaintext } = mint({ expiresPreset: "1h" });
    await clock.advance(3_599_999);
    expect(catalog.verifyPoolKey(pool, plaintext)).not.toBeNull();
    await clock.advance(1);
    expect(catalog.verifyPoolKey(pool, plaintext)).toBeNull();
    expect(catalog.verifyPoolKey(pool, plaintext, clock.now() - 1)).not.toBeNull();
  });

  it("rejects a revoked key; revoking is scoped to the team's pool", () => {
    const { catalog, team, pool, mint, clock } = fixture();
    const { key, plaintext } = mint();
    expect(catalog.revokePoolKey(team.id, "llm", key.id + 1_000)).toBeUndefined();
    expect(() => catalog.revokePoolKey(team.id + 1_000, "llm", key.id)).toThrow(PoolNotFoundError);
    expect(catalog.verifyPoolKey(pool, plaintext)).not.toBeNull();
    const revoked = catalog.revokePoolKey(team.id, "llm", key.id);
    expect(revoked?.revokedAt).toBe(clock.now());
    expect(catalog.verifyPoolKey(pool, plaintext)).toBeNull();
  });
});

describe("stored credentials", () => {
  it("seals an upstream credential and decrypts it for the proxy", () => {
    const { catalog, store, team } = fixture();
    const credential = catalog.sealCredential("Authorization", "Bearer sk-live-123");
    expect(JSON.stringify(credential)).not.toContain("sk-live-123");
    const pool = store.upsertPool(team.id, poolInput({ credential }));
    expect(catalog.decryptCredential(pool)).toEqual({
      header: "authorization",
      value: "Bearer sk-live-123",
    });
    expect(catalog.decryptCredential({ ...pool, credential: null })).toBeNull();
  });

  it("refuses a header or value that could not be sent as they are", () => {
    const { catalog } = fixture();
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
