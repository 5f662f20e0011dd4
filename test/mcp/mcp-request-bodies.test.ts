import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssistantServer,
  postToolsList,
  signInClient,
  startWithRegisteredClient,
} from "./harness.js";

// The MCP SDK reads /mcp bodies itself (not through adapters/hono/json-body.ts): these pin
// that what a signed-in client sends cannot crash the endpoint or be read without bound.
let env: AssistantServer;
let accessToken: string;
const redirectUri = "http://127.0.0.1:40125/cb";

beforeAll(async () => {
  const started = await startWithRegisteredClient(redirectUri);
  env = started.env;
  accessToken = (await signInClient({ ...started, redirectUri })).tokens.access_token;
});
afterAll(() => env.close());

function postMcp(body: string): Promise<Response> {
  return fetch(env.resource, {
    method: "POST",
    headers: {
      authorization: `Bearer ${accessToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body,
  });
}

describe("MCP request bodies", () => {
  it("arguments nested 200 000 levels deep are a tool error that names the argument", async () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const response = await postMcp(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_pool","arguments":{"pool":${deep}}}}`,
    );
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"isError":true');
    expect(text).toContain("pool must be a string");
    expect((await postToolsList(env.resource, accessToken)).status).toBe(200);
  });

  it("a body over 4 MiB is 413 with a JSON-RPC error, and the endpoint keeps serving", async () => {
    const padding = "a".repeat(5 * 1024 * 1024);
    const response = await postMcp(
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"${padding}"}}`,
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    expect((await postToolsList(env.resource, accessToken)).status).toBe(200);
  });
});
