import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeMember } from "../../src/auth/member-changes.js";
import {
  type AssistantServer,
  connectMcp,
  INSECURE,
  postToolsCall,
  signInClient,
  startWithRegisteredClient,
} from "./harness.js";

let env: AssistantServer;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
const redirectUri = "http://127.0.0.1:40125/cb";

beforeAll(async () => {
  ({ env, as, client } = await startWithRegisteredClient(redirectUri));
});
afterAll(() => env.close());

/** The body of a tools/call answered as JSON or as one SSE event. */
async function toolResult(response: Response) {
  const text = await response.text();
  const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "null");
  return JSON.parse(json).result;
}

/** The refresh token no longer brings access back: `invalid_grant`. */
async function expectRefreshRefused(refreshToken: string): Promise<void> {
  const refreshed = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
    ...INSECURE,
    additionalParameters: { resource: env.resource },
  });
  await expect(oauth.processRefreshTokenResponse(as, client, refreshed)).rejects.toMatchObject({
    error: "invalid_grant",
  });
}

describe("an assistant's token and its user's membership", () => {
  it("works while the user is in the team; once removed, the next tools/call is 401 and the refresh token is refused", async () => {
    const { maxId, adaId, acmeId } = env.seeded;
    const maxCookie = env.sessions.signIn(maxId, acmeId, "member");
    const { tokens } = await signInClient({ as, client, redirectUri, cookie: maxCookie });
    const accessToken = tokens.access_token;

    const mcp = await connectMcp(env.resource, () => accessToken);
    const whoami = await mcp.callTool({ name: "whoami", arguments: {} });
    expect(whoami.isError).toBeFalsy();
    expect(whoami.structuredContent).toMatchObject({ user: { id: maxId }, team: { id: acmeId } });
    const before = await postToolsCall(env.resource, accessToken, "list_pools");
    expect(before.status).toBe(200);
    expect((await toolResult(before)).structuredContent.pools).toEqual(
      expect.arrayContaining([expect.objectContaining({ subdomain: "chat" })]),
    );

    // Ada removes Max the way the dashboard's members page does.
    const { catalog, auth } = env.server;
    await removeMember(
      { store: catalog.store, secretBox: catalog.secretBox, clock: catalog.clock, auth },
      { teamId: acmeId, actorUserId: adaId, userId: maxId },
    );

    // The very next call, with a token that has not expired, is refused as an invalid token:
    // the client is told to sign in again, and no tool runs.
    const after = await postToolsCall(env.resource, accessToken, "list_pools");
    expect(after.status).toBe(401);
    const challenge = after.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer error="invalid_token"/);
    expect(challenge).toContain(
      `resource_metadata="${env.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    await expect(mcp.callTool({ name: "whoami", arguments: {} })).rejects.toThrow();
    await mcp.close();

    // Nor does the refresh token bring the access back.
    await expectRefreshRefused(tokens.refresh_token as string);
  });

  it("a member removed and added back does not get the old connection back", async () => {
    const { adaId, acmeId } = env.seeded;
    const { catalog, auth } = env.server;
    const { user: sam } = await catalog.addMember(
      acmeId,
      { name: "Sam", email: "sam@acme.test" },
      "member",
    );
    const samCookie = env.sessions.signIn(sam.id, acmeId, "member");
    const { tokens } = await signInClient({ as, client, redirectUri, cookie: samCookie });
    expect((await postToolsCall(env.resource, tokens.access_token, "whoami")).status).toBe(200);

    await removeMember(
      { store: catalog.store, secretBox: catalog.secretBox, clock: catalog.clock, auth },
      { teamId: acmeId, actorUserId: adaId, userId: sam.id },
    );
    await catalog.addMember(acmeId, { name: "Sam", email: "sam@acme.test" }, "member");

    // Like their API tokens, what Sam connected before ended with the membership.
    const after = await postToolsCall(env.resource, tokens.access_token, "whoami");
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    await expectRefreshRefused(tokens.refresh_token as string);
    // Nor is it listed among Sam's connected apps.
    const page = await fetch(`${env.baseUrl}/oauth/connected-apps`, {
      headers: { cookie: samCookie },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain("/revoke");
  });
});
