import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_METHODS } from "../../src/catalog/key-access.js";
import { expectErrorBody, expectValidationError } from "./assertions.js";
import { type ControlApiHarness, START, startControlApi } from "./harness.js";

const HOUR_MS = 3_600_000;

describe.each(["memory", "sqlite"] as const)("pool keys (%s store)", (kind) => {
  let api: ControlApiHarness;
  let token: string;

  beforeAll(async () => {
    api = await startControlApi(kind);
    token = await api.fullToken();
  });
  afterAll(async () => {
    await api.close();
  });

  function createKey(pool: string, json?: unknown) {
    return api.call("POST", `/api/v1/pools/${pool}/keys`, { token, json });
  }

  describe("POST /api/v1/pools/{pool}/keys", () => {
    it("mints a full-access key without a body, returning the key and signing secret once", async () => {
      const response = await createKey("llm");
      expect(response.status).toBe(201);
      const key = response.body.data;
      expect(key).toEqual({
        id: expect.any(Number),
        label: "",
        last_four: key.key.slice(-4),
        access: "write",
        allowed_methods: [...ALL_METHODS],
        read_paths: { POST: ["/v1/embeddings"] },
        expires_at: null,
        revoked_at: null,
        created_at: new Date(START).toISOString(),
        key: expect.stringMatching(/^slc_key_/),
        signing_secret: expect.stringMatching(/^slc_sig_/),
      });
      // The minted key admits traffic on its pool.
      expect((await api.catalog.verifyPoolKey("llm", key.key))?.id).toBe(key.id);
      expect(
        api.catalog.decryptSigningSecret((await api.store.getPoolKey(api.acme.llm.id, key.id))!),
      ).toBe(key.signing_secret);
    });

    it("omits signing_secret and read_paths when the pool neither signs nor scopes reads", async () => {
      const response = await createKey("embed", { label: "batch" });
      expect(response.status).toBe(201);
      expect(response.body.data.label).toBe("batch");
      expect(response.body.data).not.toHaveProperty("signing_secret");
      expect(response.body.data).not.toHaveProperty("read_paths");
    });

    it("returns the request_signing_secret once when the pool has the hmac caller policy", async () => {
      const { id: _id, teamId, createdAt: _c, updatedAt: _u, ...embed } = api.acme.embed;
      await api.store.upsertPool(teamId, {
        ...embed,
        callerPolicies: { hmac: { skewSeconds: 300 } },
      });
      try {
        const response = await createKey("embed");
        expect(response.status).toBe(201);
        const key = response.body.data;
        expect(key.request_signing_secret).toMatch(/^slc_req_/);
        expect(key).not.toHaveProperty("signing_secret");
        const stored = (await api.store.getPoolKey(api.acme.embed.id, key.id))!;
        expect(api.catalog.decryptRequestSecret(stored)).toBe(key.request_signing_secret);
      } finally {
        await api.store.upsertPool(teamId, embed);
      }
    });

    it("mints a read key admitting the safe methods and the pool's read methods", async () => {
      const response = await createKey("llm", { access: "read", label: "reader" });
      expect(response.status).toBe(201);
      expect(response.body.data).toMatchObject({
        access: "read",
        allowed_methods: ["GET", "HEAD", "OPTIONS", "POST"],
        read_paths: { POST: ["/v1/embeddings"] },
      });
    });

    it("lets a read key on a postgres pool connect with every method (the database refuses writes)", async () => {
      const response = await createKey("warehouse", { access: "read" });
      expect(response.status).toBe(201);
      expect(response.body.data.allowed_methods).toEqual([...ALL_METHODS]);
    });

    it.each([
      ["1h", new Date(START + HOUR_MS).toISOString()],
      ["24h", new Date(START + 24 * HOUR_MS).toISOString()],
      ["7d", new Date(START + 7 * 24 * HOUR_MS).toISOString()],
      ["none", null],
    ])("applies the expiry preset %s", async (preset, expiresAt) => {
      const response = await createKey("embed", { expires_preset: preset });
      expect(response.status).toBe(201);
      expect(response.body.data.expires_at).toBe(expiresAt);
    });

    it("accepts an explicit future expires_at with an offset", async () => {
      const response = await createKey("embed", { expires_at: "2030-02-01T09:30:00+02:00" });
      expect(response.status).toBe(201);
      expect(response.body.data.expires_at).toBe("2030-02-01T07:30:00.000Z");
    });

    it("treats null fields, an empty body and a JSON null body as omitted", async () => {
      const nulls = await createKey("embed", {
        label: null,
        access: null,
        expires_preset: null,
        expires_at: null,
      });
      expect(nulls.status).toBe(201);
      expect(nulls.body.data).toMatchObject({ access: "write", expires_at: null, label: "" });
      const empty = await api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody: "",
        headers: { "content-type": "application/json" },
      });
      expect(empty.status).toBe(201);
      const jsonNull = await api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody: "null",
        headers: { "content-type": "application/json" },
      });
      expect(jsonNull.status).toBe(201);
    });

    it("counts the 60-character label limit in characters, not UTF-16 units", async () => {
      const emoji = "🔑".repeat(60);
      const accepted = await createKey("embed", { label: emoji });
      expect(accepted.status).toBe(201);
      expect(accepted.body.data.label).toBe(emoji);
      expectValidationError(await createKey("embed", { label: "x".repeat(61) }), ["label"]);
    });

    it.each([
      ["a label over 60 characters", { label: "y".repeat(61) }, ["label"]],
      ["a label that is not a string", { label: 42 }, ["label"]],
      ["a label with control characters", { label: "ok\u001b[2J" }, ["label"]],
      ["an unknown preset", { expires_preset: "30d" }, ["expires_preset"]],
      // JSON.stringify escapes it as \ud800, which JSON.parse turns back into a lone surrogate.
      ["a label with a lone surrogate", { label: "x\ud800" }, ["label"]],
      ["an unknown access", { access: "admin" }, ["access"]],
      ["a malformed expires_at", { expires_at: "tomorrow" }, ["expires_at"]],
      ["an impossible date", { expires_at: "2030-02-30T00:00:00Z" }, ["expires_at"]],
      ["a zone-less expires_at", { expires_at: "2031-01-01T00:00:00" }, ["expires_at"]],
      ["a numeric expires_at", { expires_at: 1_900_000_000_000 }, ["expires_at"]],
      ["a past expires_at", { expires_at: "2030-01-15T11:59:59Z" }, ["expires_at"]],
      ["expires_at equal to now", { expires_at: new Date(START).toISOString() }, ["expires_at"]],
      [
        "both a preset and expires_at",
        { expires_preset: "1h", expires_at: "2031-01-01T00:00:00Z" },
        ["expires_at"],
      ],
      [
        "several bad fields at once",
        { label: "z".repeat(70), access: "rw", expires_preset: "1y" },
        ["label", "access", "expires_preset"],
      ],
      ["a JSON array body", [1, 2], ["body"]],
      ["a JSON string body", "label", ["body"]],
    ])("answers 422 for %s", async (_case, body, fields) => {
      const before = (await api.store.listPoolKeys(api.acme.embed.id)).length;
      const response = await createKey("embed", body);
      expectValidationError(response, fields);
      expect(await api.store.listPoolKeys(api.acme.embed.id)).toHaveLength(before);
    });

    it("names the field and counts further problems in the 422 message", async () => {
      const response = await createKey("embed", { label: "z".repeat(70), access: "rw" });
      expect(response.body.message).toMatch(/^label: .+ \(and 1 more error\)$/);
    });

    it.each([
      ["malformed JSON", "{"],
      ["trailing garbage", '{"label":"a"} x'],
      ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d])],
    ])("answers 400 for %s", async (_case, rawBody) => {
      const response = await api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody,
        headers: { "content-type": "application/json" },
      });
      expectErrorBody(response, 400);
    });

    it("answers 422 naming an unknown field, and mints nothing", async () => {
      const before = (await api.store.listPoolKeys(api.acme.embed.id)).length;
      const response = await createKey("embed", { label: "x", key: "slc_key_chosenbyme" });
      expectValidationError(response, ["key"]);
      expect(response.body.errors.key).toEqual(["Unknown field."]);
      expect(await api.store.listPoolKeys(api.acme.embed.id)).toHaveLength(before);
    });

    it("answers 422 for unknown fields named like Object.prototype's members, never 500", async () => {
      for (const name of ["valueOf", "toString", "constructor", "hasOwnProperty", "__proto__"]) {
        const response = await api.call("POST", "/api/v1/pools/embed/keys", {
          token,
          rawBody: `{"${name}": ""}`,
          headers: { "content-type": "application/json" },
        });
        expectValidationError(response, [name]);
        expect(response.body.errors[name], name).toEqual(["Unknown field."]);
      }
    });

    it("answers 415 for a body not declared application/json; an empty one needs no type", async () => {
      for (const type of [undefined, "text/plain", "application/x-www-form-urlencoded"]) {
        const response = await api.call("POST", "/api/v1/pools/embed/keys", {
          token,
          rawBody: '{"label":"x"}',
          headers: type === undefined ? {} : { "content-type": type },
        });
        expectErrorBody(response, 415);
        expect(response.body.message).toContain("application/json");
      }
      const charset = await api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody: '{"label":"x"}',
        headers: { "content-type": "Application/JSON; charset=utf-8" },
      });
      expect(charset.status).toBe(201);
      const empty = await api.call("POST", "/api/v1/pools/embed/keys", { token, rawBody: "" });
      expect(empty.status).toBe(201);
    });

    it("answers 400 for a body nested thousands of levels deep, and reads one with a BOM", async () => {
      const deep = await api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody: `{"label":${"[".repeat(7000)}${"]".repeat(7000)}}`,
        headers: { "content-type": "application/json" },
      });
      expectErrorBody(deep, 400);
      const bom = await api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody: '\uFEFF{"label":"bom"}',
        headers: { "content-type": "application/json" },
      });
      expect(bom.status).toBe(201);
      expect(bom.body.data.label).toBe("bom");
    });

    it("answers 413 for a body over the limit", async () => {
      const response = await createKey("embed", { label: "a".repeat(20_000) });
      expectErrorBody(response, 413);
    });

    it("answers 404 for an unknown pool, whatever the body", async () => {
      expectErrorBody(await createKey("nope"), 404);
      expectErrorBody(await createKey("nope", { access: "admin" }), 404);
    });
  });

  describe("DELETE /api/v1/pools/{pool}/keys/{apiKey}", () => {
    it("revokes the key: 200 with revoked_at set and no plaintext", async () => {
      const minted = (await createKey("llm", { label: "to revoke", access: "read" })).body.data;
      api.clock.advanceSync(5_000);
      const response = await api.call("DELETE", `/api/v1/pools/llm/keys/${minted.id}`, { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        data: {
          id: minted.id,
          label: "to revoke",
          last_four: minted.last_four,
          access: "read",
          allowed_methods: ["GET", "HEAD", "OPTIONS", "POST"],
          read_paths: { POST: ["/v1/embeddings"] },
          expires_at: null,
          revoked_at: new Date(api.clock.now()).toISOString(),
          created_at: minted.created_at,
        },
      });
      expect(response.text).not.toContain(minted.key);
      expect(response.text).not.toContain(minted.signing_secret);
      expect(await api.catalog.verifyPoolKey("llm", minted.key)).toBeNull();
    });

    it("keeps the first revocation time when revoked twice", async () => {
      const minted = (await createKey("embed")).body.data;
      const first = await api.call("DELETE", `/api/v1/pools/embed/keys/${minted.id}`, { token });
      api.clock.advanceSync(60_000);
      const second = await api.call("DELETE", `/api/v1/pools/embed/keys/${minted.id}`, { token });
      expect(second.status).toBe(200);
      expect(second.body.data.revoked_at).toBe(first.body.data.revoked_at);
    });

    it("answers 404 for a key of another pool of the same team, and leaves it live", async () => {
      const minted = (await createKey("embed")).body.data;
      expectErrorBody(
        await api.call("DELETE", `/api/v1/pools/llm/keys/${minted.id}`, { token }),
        404,
      );
      expect(await api.catalog.verifyPoolKey("embed", minted.key)).not.toBeNull();
    });

    it.each(["999999", "abc", "1.0", "-1", "0x1", "99999999999999999999"])(
      "answers 404 for the unknown or non-numeric key id %s",
      async (segment) => {
        expectErrorBody(
          await api.call("DELETE", `/api/v1/pools/llm/keys/${segment}`, { token }),
          404,
        );
      },
    );

    it("answers 404 for an unknown pool", async () => {
      const minted = (await createKey("embed")).body.data;
      expectErrorBody(
        await api.call("DELETE", `/api/v1/pools/nope/keys/${minted.id}`, { token }),
        404,
      );
    });
  });

  describe("GET /api/v1/pools/{pool}/keys", () => {
    it("lists every key of the pool, revoked ones included, with metadata only", async () => {
      const live = (await createKey("open", { label: "live", access: "read" })).body.data;
      const revoked = (await createKey("open", { label: "gone" })).body.data;
      await api.call("DELETE", `/api/v1/pools/open/keys/${revoked.id}`, { token });
      await createKey("embed", { label: "other pool" });

      const response = await api.call("GET", "/api/v1/pools/open/keys", { token });
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const { key: _key, ...liveMetadata } = live;
      expect(response.body.data).toEqual([
        liveMetadata,
        expect.objectContaining({ id: revoked.id, label: "gone", revoked_at: expect.any(String) }),
      ]);
      for (const listed of response.body.data) {
        expect(Object.keys(listed)).not.toContain("key");
        expect(Object.keys(listed)).not.toContain("signing_secret");
      }
      expect(response.text).not.toContain(live.key);
      expect(response.text).not.toContain(revoked.key);
      for (const record of await api.store.listPoolKeys(api.acme.open.id)) {
        expect(response.text).not.toContain(record.keyHash);
      }
    });

    it("never shows a signing pool's signing secret", async () => {
      const minted = (await createKey("llm", { label: "signed" })).body.data;
      const response = await api.call("GET", "/api/v1/pools/llm/keys", { token });
      expect(response.status).toBe(200);
      expect(response.body.data.map((key: { id: number }) => key.id)).toContain(minted.id);
      expect(response.text).not.toContain(minted.signing_secret);
      expect(response.text).not.toContain(minted.key);
    });

    it("answers 404 for an unknown pool", async () => {
      expectErrorBody(await api.call("GET", "/api/v1/pools/nope/keys", { token }), 404);
    });
  });
});
