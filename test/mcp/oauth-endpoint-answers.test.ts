import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CONSENT_FORM_BYTES } from "../../adapters/oauth/authorize-routes.js";
import { type AssistantServer, startAssistantServer } from "./harness.js";

let env: AssistantServer;
beforeAll(async () => {
  env = await startAssistantServer();
});
afterAll(() => env.close());

/** What a client or a person poking at the authorization server's URLs is answered. */
describe("OAuth endpoints on a real server", () => {
  it("a method other than POST at /oauth/token, /revoke and /register is 405 with Allow and an OAuth error", async () => {
    for (const path of ["/oauth/token", "/oauth/revoke", "/oauth/register"]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const response = await fetch(`${env.baseUrl}${path}`, { method });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get("allow")).toBe("POST");
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        expect(await response.json()).toEqual({
          error: "invalid_request",
          error_description: `Use POST for ${path}.`,
        });
      }
    }
  });

  it("a consent form over its size is refused with 413 before it is read, signed in or not", async () => {
    const post = (size: number) =>
      fetch(`${env.baseUrl}/oauth/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: env.baseUrl },
        body: `decision=approve&ticket=${"a".repeat(size)}`,
      });
    const large = await post(MAX_CONSENT_FORM_BYTES);
    expect(large.status).toBe(413);
    expect(await large.text()).toContain("The consent form is over 65536 bytes");
    // Within the bound, the form is read: an unknown ticket is an expired consent.
    const small = await post(1_000);
    expect(small.status).toBe(400);
    expect(await small.text()).toContain("Consent expired");
  });

  it("an unknown well-known document is a JSON 404, not the dashboard's sign-in redirect", async () => {
    for (const path of [
      "/.well-known/openid-configuration",
      "/.well-known/security.txt",
      "/.well-known/oauth-authorization-server/tenant1",
      "/.well-known/oauth-protected-resource/other",
      "/oauth/nothing",
    ]) {
      const response = await fetch(`${env.baseUrl}${path}`, { redirect: "manual" });
      expect(response.status, path).toBe(404);
      expect(await response.json()).toEqual({
        error: "not_found",
        error_description: `Nothing is served at ${path}.`,
      });
    }
    // The documents that exist are still served.
    for (const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      expect((await fetch(`${env.baseUrl}${path}`)).status, path).toBe(200);
    }
  });

  it("a method other than GET at a metadata document is 405 with Allow and an OAuth error", async () => {
    for (const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      for (const method of ["POST", "PUT", "DELETE"]) {
        const response = await fetch(`${env.baseUrl}${path}`, { method, body: "{}" });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get("allow")).toBe("GET, HEAD");
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        expect(await response.json()).toEqual({
          error: "invalid_request",
          error_description: `Use GET for ${path}.`,
        });
      }
    }
  });

  it("a browser client's CORS preflight for a metadata document is allowed (the MCP SDK sends MCP-Protocol-Version)", async () => {
    for (const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const preflight = await fetch(`${env.baseUrl}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: "http://localhost:6274",
          "access-control-request-method": "GET",
          "access-control-request-headers": "mcp-protocol-version",
        },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(preflight.headers.get("access-control-allow-methods"), path).toContain("GET");
      expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase(), path).toContain(
        "mcp-protocol-version",
      );
      const document = await fetch(`${env.baseUrl}${path}`, {
        headers: { origin: "http://localhost:6274", "mcp-protocol-version": "2025-11-25" },
      });
      expect(document.status, path).toBe(200);
      expect(document.headers.get("access-control-allow-origin"), path).toBe("*");
    }
  });

  it("a consent answer whose form cannot be read is a 400 invalid_request naming it, not a logged bug", async () => {
    const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
    const response = await fetch(`${env.baseUrl}/oauth/authorize`, {
      method: "POST",
      headers: { cookie, origin: env.baseUrl, "content-type": "multipart/form-data" },
      body: "ticket=x&decision=approve",
      redirect: "manual",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "invalid_request",
      error_description: "The consent form could not be read.",
    });
  });

  it("a registration body that is no object, or lacks redirect_uris, is told so plainly", async () => {
    const cases: [string, string][] = [
      ["[]", "The body must be a JSON object."],
      ["42", "The body must be a JSON object."],
      ["null", "The body must be a JSON object."],
      ["{}", "redirect_uris is required."],
      ['{"client_name":"x"}', "redirect_uris is required."],
    ];
    for (const [body, message] of cases) {
      const response = await fetch(`${env.baseUrl}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(response.status, body).toBe(400);
      expect(await response.json()).toEqual({
        error: "invalid_client_metadata",
        error_description: message,
      });
    }
  });
});
