import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyText, contentType, method, rawJsonObject, rawJsonValue } from "./arbitraries.js";
import { describeRequest, faultLines, fuzzOptions } from "./contract.js";
import { type FuzzServer, type RawRequest, rawRequest, startFuzzServer } from "./harness.js";

let env: FuzzServer;
beforeAll(async () => {
  env = await startFuzzServer({ withMcp: true });
});
afterAll(() => env?.close());
/** The tools and their argument names (a tool's schema is checked against this list below). */
const TOOL_ARGUMENTS: Record<string, readonly string[]> = {
  whoami: [],
  list_budgets: [],
  get_budget: ["budget_id"],
  list_pools: [],
  get_pool: ["pool"],
  get_pool_status: ["pool"],
  get_pool_metrics: ["pool", "from", "to"],
  query_access_log: ["pool", "outcomes", "upstream_status", "minutes", "limit"],
  list_pool_keys: ["pool"],
  mint_pool_key: ["pool", "label", "expires_preset", "access", "expires_at"],
  revoke_pool_key: ["pool", "key_id"],
};

const argumentValue = fc.oneof(
  rawJsonValue,
  fc.constantFrom(
    '"chat"',
    '"open"',
    "1",
    '"2030-01-15T12:00:00Z"',
    '"9999-12-31T23:59:59Z"',
    '"0000-01-01T00:00:00Z"',
    '["rejected"]',
    '["nope"]',
    '"read"',
    '"1h"',
  ),
);
const toolCall = fc
  .record({
    tool: fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom(...Object.keys(TOOL_ARGUMENTS)) },
      { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
    ),
    pairs: fc.array(fc.tuple(fc.nat(), argumentValue), { maxLength: 5 }),
    extra: fc.boolean(),
  })
  .map(({ tool, pairs, extra }) => {
    const names = Object.hasOwn(TOOL_ARGUMENTS, tool)
      ? (TOOL_ARGUMENTS[tool] as readonly string[])
      : ["x"];
    const fields = new Map<string, string>();
    if (names.includes("pool")) fields.set("pool", '"chat"');
    for (const [index, value] of pairs)
      fields.set(names.length > 0 ? (names[index % names.length] as string) : "x", value);
    if (extra) fields.set("unexpected", "1");
    const args = `{${[...fields].map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(",")}}`;
    return `{"name":${JSON.stringify(tool)},"arguments":${args}}`;
  });
const rpcBody = fc.oneof(
  {
    weight: 5,
    arbitrary: toolCall.map(
      (params) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`,
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          "initialize",
          "tools/list",
          "tools/call",
          "ping",
          "resources/list",
          "prompts/list",
          "notifications/initialized",
          "logging/setLevel",
          "completion/complete",
          "x",
        ),
        fc.oneof(
          rawJsonValue,
          rawJsonObject(["name", "arguments", "protocolVersion", "cursor", "level", "_meta"]),
        ),
        fc.oneof(
          fc.constantFrom("1", '"a"', "null", "1e309", "{}", "[]", "-1.5"),
          fc.constant(undefined),
        ),
      )
      .map(
        ([rpcMethod, params, id]) =>
          `{"jsonrpc":"2.0",${id === undefined ? "" : `"id":${id},`}"method":"${rpcMethod}","params":${params}}`,
      ),
  },
  { weight: 1, arbitrary: bodyText(["jsonrpc", "id", "method", "params"]) },
  {
    weight: 1,
    arbitrary: fc
      .array(toolCall, { minLength: 1, maxLength: 3 })
      .map(
        (calls) =>
          `[${calls.map((params, id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`).join(",")}]`,
      ),
  },
);

const mcpRequest = fc
  .record({
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: method },
    ),
    body: rpcBody,
    accept: fc.constantFrom(
      "application/json, text/event-stream",
      "application/json, text/event-stream",
      "application/json",
      "text/event-stream",
      "*/*",
      undefined,
    ),
    contentType: fc.oneof(
      { weight: 4, arbitrary: fc.constant("application/json") },
      { weight: 1, arbitrary: contentType },
    ),
    auth: fc.constantFrom("token", "token", "token", "token", "none", "junk", "api-token"),
    protocolVersion: fc.constantFrom(undefined, "2025-06-18", "2025-03-26", "1999-01-01", "x"),
    sessionId: fc.constantFrom(undefined, "x", "%ZZ"),
  })
  .map((r): RawRequest => {
    const headers: Record<string, string> = {};
    if (r.accept !== undefined) headers.accept = r.accept;
    if (r.contentType !== undefined) headers["content-type"] = r.contentType;
    if (r.auth === "token") headers.authorization = `Bearer ${env.mcpToken}`;
    if (r.auth === "junk") headers.authorization = "Bearer %ZZ";
    if (r.auth === "api-token") headers.authorization = `Bearer ${env.apiToken}`;
    if (r.protocolVersion !== undefined) headers["mcp-protocol-version"] = r.protocolVersion;
    if (r.sessionId !== undefined) headers["mcp-session-id"] = r.sessionId;
    const sendsBody = r.method !== "GET" && r.method !== "HEAD";
    return { method: r.method, path: "/mcp", headers, body: sendsBody ? r.body : undefined };
  });

/** A well-formed JSON-RPC POST to /mcp with the assistant's token. */
function wellFormedCall(body: string) {
  return rawRequest(env.port, {
    method: "POST",
    path: "/mcp",
    headers: {
      authorization: `Bearer ${env.mcpToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body,
  });
}

/** JSON-RPC messages of an answer, whether sent as JSON or as server-sent events. */
function rpcMessages(text: string): Record<string, unknown>[] {
  const events = [...text.matchAll(/^data: (.*)$/gm)].map((match) => match[1] as string);
  const parts = events.length > 0 ? events : text.trim() === "" ? [] : [text];
  return parts.flatMap((part) => {
    const parsed = JSON.parse(part) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
  });
}

describe("The MCP server under malformed input (property, real socket)", () => {
  it("MCP: the tool list is the one fuzzed here", async () => {
    const answer = await wellFormedCall('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    const [message] = rpcMessages(answer.text);
    const result = message?.result as {
      tools: { name: string; inputSchema: { properties: object } }[];
    };
    const tools = result.tools;
    expect(
      Object.fromEntries(
        tools.map((tool) => [tool.name, Object.keys(tool.inputSchema.properties)]),
      ),
    ).toEqual(TOOL_ARGUMENTS);
  });

  it("MCP: no 5xx, no internal error, no tool failing unexpectedly, whatever the JSON-RPC", async () => {
    await fc.assert(
      fc.asyncProperty(mcpRequest, async (request) => {
        const answer = await rawRequest(env.port, request);
        const what = `${describeRequest(request)} → ${answer.status} ${answer.failure ?? answer.text.slice(0, 400)}`;
        expect(answer.failure, what).toBeUndefined();
        expect(answer.status, what).toBeLessThan(500);
        if (request.method === "HEAD" || answer.status === 202 || answer.status === 204) return;
        const messages = rpcMessages(answer.text);
        for (const message of messages) {
          const error = message.error as { code?: number } | undefined;
          // -32603: an exception inside the server, reported as such. Known exception: the MCP
          // SDK (2.4) answers `initialize` with invalid params -32603 and its schema errors,
          // where -32602 is due; Sluice never sees that request (reported upstream-side).
          const sdkInitialize = /"method":\s*"initialize"/.test(String(request.body));
          if (!sdkInitialize) expect(error?.code, what).not.toBe(-32603);
          const content = (message.result as { content?: { text?: string }[] } | undefined)
            ?.content;
          expect(JSON.stringify(content ?? ""), what).not.toContain("failed unexpectedly");
        }
        if (answer.status >= 400 && messages.length > 0) {
          // A JSON-RPC error, an OAuth error, or (no token sent: RFC 6750 §3.1) a description only.
          const first = messages[0] as Record<string, unknown>;
          expect(first.error ?? first.error_description, what).toBeDefined();
        }
      }),
      fuzzOptions(400, 20261127),
    );
    // The connection still works after all of it.
    const whoami = await wellFormedCall(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}',
    );
    expect(whoami.status).toBe(200);
  });

  it("logged no fault while answering all of it", () => {
    expect(faultLines(env.logs)).toEqual([]);
  });
});
