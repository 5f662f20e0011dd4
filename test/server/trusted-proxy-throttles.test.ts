import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTRATION_LIMITS } from "../../adapters/oauth/registration-guard.js";
import { type AssistantServer, startAssistantServer } from "../mcp/harness.js";

// Behind a load balancer every request comes from its address: the sign-in and
// registration throttles must count the client it vouches for, and only when it is one of
// the server's trusted proxies (else a caller picks a fresh X-Forwarded-For per attempt).
let behindProxy: AssistantServer;
let direct: AssistantServer;
beforeAll(async () => {
  [behindProxy, direct] = await Promise.all([
    startAssistantServer("private", { trustedProxies: "127.0.0.1/32,::1/128" }),
    startAssistantServer(),
  ]);
});
afterAll(() => Promise.all([behindProxy?.close(), direct?.close()]));

let guesses = 0;
/** A wrong password for a new email each time, so only the per-address count can throttle. */
function signIn(env: AssistantServer, forwardedFor: string): Promise<Response> {
  return fetch(`${env.baseUrl}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: env.baseUrl, "x-forwarded-for": forwardedFor },
    body: new URLSearchParams({
      email: `guess${guesses++}@example.test`,
      password: "not the password",
    }),
  });
}

function register(env: AssistantServer, forwardedFor: string): Promise<Response> {
  return fetch(`${env.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:40300/cb"] }),
  });
}

async function untilStatus(send: () => Promise<Response>, status: number): Promise<number> {
  for (let attempt = 1; attempt <= 50; attempt++) {
    if ((await send()).status === status) return attempt;
  }
  throw new Error(`never answered ${status}`);
}

describe("throttles behind trusted proxies", () => {
  it("count dashboard sign-ins per forwarded client behind a trusted proxy, per socket otherwise", {
    timeout: 120_000,
  }, async () => {
    await untilStatus(() => signIn(behindProxy, "203.0.113.6"), 429);
    expect((await signIn(behindProxy, "203.0.113.7")).status).toBe(401);
    // Hops left of an untrusted one are the client's own words: not counted apart.
    expect((await signIn(behindProxy, "198.51.100.1, 203.0.113.6")).status).toBe(429);

    await untilStatus(() => signIn(direct, "203.0.113.6"), 429);
    expect((await signIn(direct, "203.0.113.7")).status).toBe(429);
  });

  it("count open client registrations per forwarded client behind a trusted proxy", async () => {
    const attempts = await untilStatus(() => register(behindProxy, "203.0.113.8"), 429);
    expect(attempts).toBe(REGISTRATION_LIMITS.perAddress + 1);
    expect((await register(behindProxy, "203.0.113.9")).status).toBe(201);

    await untilStatus(() => register(direct, "203.0.113.8"), 429);
    expect((await register(direct, "203.0.113.9")).status).toBe(429);
  });

  it("refuse registration metadata nested too deep with invalid_client_metadata", async () => {
    const deep = `{"redirect_uris":["http://127.0.0.1:40300/cb"],"x":${"[".repeat(100)}${"]".repeat(100)}}`;
    const response = await fetch(`${behindProxy.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.10" },
      body: deep,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "invalid_client_metadata",
      error_description: "The request body nests arrays or objects more than 32 levels deep.",
    });
  });
});
