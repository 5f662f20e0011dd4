import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../../src/catalog/secrets.js";
import { ABILITIES, type Ability } from "../../src/catalog/types.js";
import { expectErrorBody } from "./assertions.js";
import { type ControlApiHarness, startControlApi } from "./harness.js";

interface Endpoint {
  method: string;
  /** Built per call: DELETE needs a fresh key each time. */
  path: (api: ControlApiHarness) => string | Promise<string>;
  ability: Ability;
  success: number;
}

async function freshKeyPath(api: ControlApiHarness): Promise<string> {
  const minted = await api.catalog.mintPoolKey({ teamId: api.acme.team.id, subdomain: "embed" });
  return `/api/v1/pools/embed/keys/${minted.key.id}`;
}

const ENDPOINTS: Endpoint[] = [
  { method: "GET", path: () => "/api/v1/budgets", ability: "budgets:read", success: 200 },
  {
    method: "GET",
    path: (api) => `/api/v1/budgets/${api.acme.llmBudget.id}`,
    ability: "budgets:read",
    success: 200,
  },
  {
    method: "GET",
    path: (api) => `/api/v1/budgets/${api.acme.llmBudget.id}/pools`,
    ability: "pools:read",
    success: 200,
  },
  { method: "GET", path: () => "/api/v1/pools", ability: "pools:read", success: 200 },
  { method: "GET", path: () => "/api/v1/pools/llm", ability: "pools:read", success: 200 },
  { method: "GET", path: () => "/api/v1/pools/embed/keys", ability: "keys:write", success: 200 },
  { method: "POST", path: () => "/api/v1/pools/embed/keys", ability: "keys:write", success: 201 },
  { method: "DELETE", path: freshKeyPath, ability: "keys:write", success: 200 },
  { method: "GET", path: () => "/api/v1/pools/llm/metrics", ability: "metrics:read", success: 200 },
];

const endpointName = (endpoint: Endpoint) => `${endpoint.method} ${endpoint.ability}`;

describe.each(["memory", "sqlite"] as const)("Control API security (%s store)", (kind) => {
  let api: ControlApiHarness;

  beforeAll(async () => {
    api = await startControlApi(kind);
  });
  afterAll(async () => {
    await api.close();
  });

  describe("abilities", () => {
    it.each(ENDPOINTS.map((endpoint) => [endpointName(endpoint), endpoint] as const))(
      "%s: refuses a token lacking the ability with 403, admits one holding only it",
      async (_name, endpoint) => {
        const others = ABILITIES.filter((ability) => ability !== endpoint.ability);
        const path = await endpoint.path(api);
        const refused = await api.call(endpoint.method, path, {
          token: await api.token("acme", others),
        });
        expectErrorBody(refused, 403);
        expect(refused.body.message).toContain(endpoint.ability);
        // The refused DELETE must not have revoked anything.
        if (endpoint.method === "DELETE") {
          const keyId = Number(path.split("/").pop());
          expect((await api.store.getPoolKey(api.acme.embed.id, keyId))?.revokedAt).toBeNull();
        }
        const only = await api.token("acme", [endpoint.ability]);
        expect((await api.call(endpoint.method, path, { token: only })).status).toBe(
          endpoint.success,
        );
      },
    );

    it("gives pools:write alone access to /me only", async () => {
      const token = await api.token("acme", ["pools:write"]);
      expect((await api.call("GET", "/api/v1/me", { token })).status).toBe(200);
      for (const endpoint of ENDPOINTS) {
        expectErrorBody(await api.call(endpoint.method, await endpoint.path(api), { token }), 403);
      }
    });
  });

  describe("revoked and expired tokens", () => {
    it("are refused on every endpoint", async () => {
      const created = await api.catalog.createApiToken({
        teamId: api.acme.team.id,
        actorUserId: api.acme.owner.id,
        name: "revoked",
        abilities: ABILITIES,
        lifetime: "1y",
      });
      await api.catalog.revokeApiToken({
        teamId: api.acme.team.id,
        actorUserId: api.acme.owner.id,
        tokenId: created.token.id,
      });
      for (const endpoint of ENDPOINTS) {
        const response = await api.call(endpoint.method, await endpoint.path(api), {
          token: created.plaintext,
        });
        expectErrorBody(response, 401);
      }
      expectErrorBody(await api.call("GET", "/api/v1/me", { token: created.plaintext }), 401);
    });

    it("refuses an expired token on every endpoint, changing nothing", async () => {
      // Its own server: moving the clock past a month must not age the shared fixtures.
      const own = await startControlApi(kind);
      try {
        const created = await own.catalog.createApiToken({
          teamId: own.acme.team.id,
          actorUserId: own.acme.owner.id,
          name: "monthly",
          abilities: ABILITIES,
          lifetime: "1m",
        });
        const paths: (readonly [string, string])[] = [];
        for (const endpoint of ENDPOINTS) paths.push([endpoint.method, await endpoint.path(own)]);
        const keysBefore = await own.store.listPoolKeys(own.acme.embed.id);
        own.clock.advanceSync(created.token.expiresAt - own.clock.now());
        for (const [method, path] of [...paths, ["GET", "/api/v1/me"] as const]) {
          const response = await own.call(method, path, { token: created.plaintext });
          expectErrorBody(response, 401);
          expect(response.body.message).toMatch(/expired/i);
        }
        expect(await own.store.listPoolKeys(own.acme.embed.id)).toEqual(keysBefore);
      } finally {
        await own.close();
      }
    });
  });

  describe("organization isolation", () => {
    async function acmePaths(): Promise<[string, string][]> {
      const acmeKey = await api.catalog.mintPoolKey({ teamId: api.acme.team.id, subdomain: "llm" });
      return [
        ["GET", `/api/v1/budgets/${api.acme.llmBudget.id}`],
        ["GET", `/api/v1/budgets/${api.acme.llmBudget.id}/pools`],
        ["GET", "/api/v1/pools/llm"],
        ["GET", "/api/v1/pools/llm/keys"],
        ["POST", "/api/v1/pools/llm/keys"],
        ["DELETE", `/api/v1/pools/llm/keys/${acmeKey.key.id}`],
        ["GET", "/api/v1/pools/llm/metrics"],
      ];
    }

    it("answers 404 to another organization's token for every resource, changing nothing", async () => {
      const globexToken = await api.fullToken("globex");
      const keysBefore = (await api.store.listPoolKeys(api.acme.llm.id)).length;
      for (const [method, path] of await acmePaths()) {
        expectErrorBody(await api.call(method, path, { token: globexToken }), 404);
      }
      // acmePaths minted one key itself; the POST and DELETE as Globex did nothing.
      const keys = await api.store.listPoolKeys(api.acme.llm.id);
      expect(keys).toHaveLength(keysBefore + 1);
      expect(keys.every((key) => key.revokedAt === null)).toBe(true);
    });

    it("gives the same 404 for another organization's resources as for missing ones", async () => {
      const acmeToken = await api.fullToken("acme");
      const pairs: [string, string, string][] = [
        ["GET", `/api/v1/budgets/${api.globex.budget.id}`, "/api/v1/budgets/987654"],
        ["GET", `/api/v1/budgets/${api.globex.budget.id}/pools`, "/api/v1/budgets/987654/pools"],
        ["GET", "/api/v1/pools/globex-llm", "/api/v1/pools/zzzzzzzzzz"],
        ["GET", "/api/v1/pools/globex-llm/keys", "/api/v1/pools/zzzzzzzzzz/keys"],
        ["POST", "/api/v1/pools/globex-llm/keys", "/api/v1/pools/zzzzzzzzzz/keys"],
        [
          "DELETE",
          `/api/v1/pools/globex-llm/keys/${api.globex.key.key.id}`,
          `/api/v1/pools/zzzzzzzzzz/keys/${api.globex.key.key.id}`,
        ],
        ["GET", "/api/v1/pools/globex-llm/metrics", "/api/v1/pools/zzzzzzzzzz/metrics"],
      ];
      for (const [method, theirs, missing] of pairs) {
        const other = await api.call(method, theirs, { token: acmeToken });
        const absent = await api.call(method, missing, { token: acmeToken });
        expectErrorBody(other, 404);
        expect(other.headers.get("content-type")).toBe(absent.headers.get("content-type"));
        expect(other.body).toEqual(absent.body);
        expect(other.text).not.toMatch(/globex/i);
      }
    });

    it("limits a member of two organizations to the token's organization", async () => {
      const own = await startControlApi(kind);
      try {
        // Ada owns Acme and is also an owner of Globex; her Acme token still sees only Acme.
        await own.catalog.addMember(
          own.globex.team.id,
          { name: own.acme.owner.name, email: own.acme.owner.email },
          "owner",
        );
        const token = await own.token("acme", ABILITIES);
        const me = await own.call("GET", "/api/v1/me", { token });
        expect(me.body.team.slug).toBe("acme");
        const pools = await own.call("GET", "/api/v1/pools", { token });
        expect(pools.text).not.toContain("globex");
        for (const path of [
          `/api/v1/budgets/${own.globex.budget.id}`,
          "/api/v1/pools/globex-llm",
          "/api/v1/pools/globex-llm/metrics",
        ]) {
          expectErrorBody(await own.call("GET", path, { token }), 404);
        }
        const mint = await own.call("POST", "/api/v1/pools/globex-llm/keys", { token });
        expectErrorBody(mint, 404);
      } finally {
        await own.close();
      }
    });

    it("cannot revoke another organization's key through its own pool path", async () => {
      const acmeToken = await api.fullToken("acme");
      const response = await api.call("DELETE", `/api/v1/pools/llm/keys/${api.globex.key.key.id}`, {
        token: acmeToken,
      });
      expectErrorBody(response, 404);
      expect(
        await api.catalog.verifyPoolKey("globex-llm", api.globex.key.plaintext),
      ).not.toBeNull();
    });

    it("never lists another organization's budgets or pools", async () => {
      const acmeToken = await api.fullToken("acme");
      const globexToken = await api.fullToken("globex");
      const acmeBudgets = (await api.call("GET", "/api/v1/budgets", { token: acmeToken })).body
        .data;
      const globexBudgets = (await api.call("GET", "/api/v1/budgets", { token: globexToken })).body
        .data;
      expect(acmeBudgets.map((b: { id: number }) => b.id)).not.toContain(api.globex.budget.id);
      expect(globexBudgets).toEqual([
        {
          id: api.globex.budget.id,
          name: "Globex LLM",
          pool_ids: [api.globex.pool.id],
          origin_max_concurrent: 12,
          unallocated: 12,
        },
      ]);
      const acmePools = (await api.call("GET", "/api/v1/pools", { token: acmeToken })).text;
      const globexPools = (await api.call("GET", "/api/v1/pools", { token: globexToken })).body
        .data;
      expect(acmePools).not.toContain("globex");
      expect(globexPools.map((p: { subdomain: string }) => p.subdomain)).toEqual(["globex-llm"]);
      const me = (await api.call("GET", "/api/v1/me", { token: globexToken })).body;
      expect(me.team.slug).toBe("globex");
    });
  });

  describe("secrets", () => {
    it("returns a key's plaintext and signing secret only in the creation response", async () => {
      const token = await api.fullToken();
      const created = await api.call("POST", "/api/v1/pools/llm/keys", {
        token,
        json: { label: "once" },
      });
      const { key, signing_secret: signingSecret, id } = created.body.data;
      expect(key).toMatch(/^slc_key_/);
      expect(signingSecret).toMatch(/^slc_sig_/);
      const later = [
        await api.call("GET", "/api/v1/me", { token }),
        await api.call("GET", "/api/v1/budgets", { token }),
        await api.call("GET", `/api/v1/budgets/${api.acme.llmBudget.id}/pools`, { token }),
        await api.call("GET", "/api/v1/pools", { token }),
        await api.call("GET", "/api/v1/pools/llm", { token }),
        await api.call("GET", "/api/v1/pools/llm/metrics", { token }),
        await api.call("POST", "/api/v1/pools/llm/keys", { token }),
        await api.call("DELETE", `/api/v1/pools/llm/keys/${id}`, { token }),
        await api.call("DELETE", `/api/v1/pools/llm/keys/${id}`, { token }),
      ];
      for (const response of later) {
        expect(response.status).toBeLessThan(300);
        expect(response.text).not.toContain(key);
        expect(response.text).not.toContain(signingSecret);
        expect(response.text).not.toContain(key.slice(8, 30));
      }
      const revoked = later.at(-1)!.body.data;
      expect(revoked).not.toHaveProperty("key");
      expect(revoked).not.toHaveProperty("signing_secret");
      expect(revoked.revoked_at).toEqual(expect.any(String));
    });
  });
});

describe("SQLite at rest", () => {
  it("holds no plaintext token, key, signing secret or credential after API use", async () => {
    const api = await startControlApi("sqlite");
    try {
      const token = await api.fullToken();
      const secrets: string[] = [token, "sk-upstream-secret", api.globex.key.plaintext];
      const hashes: string[] = [hashSecret(token)];
      for (const pool of ["llm", "embed"]) {
        const minted = (await api.call("POST", `/api/v1/pools/${pool}/keys`, { token })).body.data;
        secrets.push(minted.key);
        hashes.push(hashSecret(minted.key));
        if (minted.signing_secret) secrets.push(minted.signing_secret);
      }
      expect(secrets).toHaveLength(6);
      const revokeId = (await api.call("POST", "/api/v1/pools/llm/keys", { token })).body.data;
      secrets.push(revokeId.key);
      await api.call("DELETE", `/api/v1/pools/llm/keys/${revokeId.id}`, { token });

      const file = api.databaseFile!;
      const rawBytes = () =>
        [file, `${file}-wal`, `${file}-shm`]
          .filter((path) => existsSync(path))
          .map((path) => readFileSync(path).toString("latin1"))
          .join("\n");

      const whileOpen = rawBytes();
      // Positive control: the hashes are there, so the bytes are the right ones.
      for (const hash of hashes) expect(whileOpen).toContain(hash);
      for (const secret of secrets) {
        expect(whileOpen).not.toContain(secret);
        expect(whileOpen).not.toContain(secret.slice(8));
      }

      await api.store.close();
      const afterClose = rawBytes();
      for (const hash of hashes) expect(afterClose).toContain(hash);
      for (const secret of secrets) expect(afterClose).not.toContain(secret.slice(8));
    } finally {
      await api.close();
    }
  });
});
