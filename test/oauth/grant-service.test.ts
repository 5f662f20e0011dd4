import { createHash } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import type { AuthorizationRequest } from "../../adapters/oauth/authorization-request.js";
import {
  ACCESS_TOKEN_TTL_MS,
  CODE_TTL_MS,
  GrantService,
  REFRESH_TOKEN_TTL_MS,
} from "../../adapters/oauth/grant-service.js";
import { MemoryOAuthStore } from "../../adapters/oauth/memory-oauth-store.js";
import { OAuthProtocolError } from "../../adapters/oauth/oauth-error.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { ManualClock } from "../../src/clock/manual-clock.js";

const VERIFIER = "v".repeat(43);
const RESOURCE = "https://sluice.test/mcp";

let clock: ManualClock;
let catalog: MemoryCatalogStore;
let grants: GrantService;
let user: { userId: number; teamId: number; role: "owner" };

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2030, 0, 1));
  catalog = new MemoryCatalogStore({ clock });
  const team = await catalog.createTeam({ name: "Acme", slug: "acme" });
  const ada = await catalog.createUser({ name: "Ada", email: "ada@acme.test" });
  await catalog.setMembership({ teamId: team.id, userId: ada.id, role: "owner" });
  user = { userId: ada.id, teamId: team.id, role: "owner" };
  grants = new GrantService({ store: new MemoryOAuthStore(), catalog, clock });
});

function request(): AuthorizationRequest {
  return {
    clientId: "slc_client_x",
    clientName: "Inspector",
    clientKind: "registered",
    redirectUri: "http://127.0.0.1:1/cb",
    state: null,
    codeChallenge: createHash("sha256").update(VERIFIER).digest("base64url"),
    scopes: ["budgets:read", "pools:read", "keys:write", "metrics:read"],
    resource: RESOURCE,
  };
}

function exchange(code: string) {
  return grants.exchangeCode(
    new URLSearchParams({
      code,
      client_id: "slc_client_x",
      code_verifier: VERIFIER,
      redirect_uri: "http://127.0.0.1:1/cb",
    }),
  );
}

async function oauthError(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuthProtocolError);
  return (error as OAuthProtocolError).error;
}

describe("grant lifetimes (ManualClock)", () => {
  it("a code is good for 60 seconds, an access token for an hour, a refresh token for 30 days", async () => {
    const early = await grants.approve(request(), user);
    clock.advanceSync(CODE_TTL_MS - 1);
    const tokens = await exchange(early);
    const late = await grants.approve(request(), user);
    clock.advanceSync(CODE_TTL_MS);
    expect(await oauthError(exchange(late))).toBe("invalid_grant");

    clock.advanceSync(ACCESS_TOKEN_TTL_MS - CODE_TTL_MS - 1);
    expect((await grants.verifyAccessToken(tokens.access_token)).scopes).toHaveLength(4);
    clock.advanceSync(1);
    expect(await oauthError(grants.verifyAccessToken(tokens.access_token))).toBe("invalid_token");

    const refresh = (token: string) =>
      grants.refresh(new URLSearchParams({ refresh_token: token, client_id: "slc_client_x" }));
    clock.advanceSync(REFRESH_TOKEN_TTL_MS - ACCESS_TOKEN_TTL_MS - 1);
    const rotated = await refresh(tokens.refresh_token);
    clock.advanceSync(REFRESH_TOKEN_TTL_MS);
    expect(await oauthError(refresh(rotated.refresh_token))).toBe("invalid_grant");
  });

  it("a demotion narrows what existing tokens may do at once, and what a refresh gives", async () => {
    const tokens = await exchange(await grants.approve(request(), user));
    await catalog.setMembership({ teamId: user.teamId, userId: user.userId, role: "member" });
    expect((await grants.verifyAccessToken(tokens.access_token)).scopes).toEqual([
      "budgets:read",
      "pools:read",
      "metrics:read",
    ]);
    const refreshed = await grants.refresh(
      new URLSearchParams({ refresh_token: tokens.refresh_token, client_id: "slc_client_x" }),
    );
    expect(refreshed.scope).toBe("budgets:read pools:read metrics:read");
  });

  it("connected apps stop listing a consent that can no longer be used", async () => {
    // Allow clicked twice: two grants, the client exchanges one code.
    await exchange(await grants.approve(request(), user));
    await grants.approve(request(), user);
    const [unexchanged, exchanged] = (await grants.listGrants(user)).map((grant) => grant.id);
    // Its code expired unused: nothing can use that grant any more.
    clock.advanceSync(2 * CODE_TTL_MS + 1);
    expect((await grants.listGrants(user)).map((grant) => grant.id)).toEqual([exchanged]);
    expect(unexchanged).toBeGreaterThan(exchanged!);
    // Once its refresh token expired too, the other one goes as well.
    clock.advanceSync(REFRESH_TOKEN_TTL_MS);
    expect(await grants.listGrants(user)).toEqual([]);
  });

  it("a refresh may narrow the scopes, never widen them", async () => {
    const tokens = await exchange(
      await grants.approve({ ...request(), scopes: ["pools:read"] }, user),
    );
    const form = (scope: string) =>
      new URLSearchParams({
        refresh_token: tokens.refresh_token,
        client_id: "slc_client_x",
        scope,
      });
    expect(await oauthError(grants.refresh(form("pools:read keys:write")))).toBe("invalid_scope");
    // The refused request did not spend the token.
    expect((await grants.refresh(form("pools:read"))).scope).toBe("pools:read");
  });
});
