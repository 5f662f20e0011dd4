import { afterAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { tempDir } from "../cli/cli-process.js";

const { dir, cleanup } = tempDir("sluice-mcp-port0-");
let server: SluiceServer | undefined;
afterAll(async () => {
  await server?.close();
  cleanup();
});

describe("the MCP endpoint of a server started on port 0", () => {
  it("names the bound port in its challenge and metadata documents, as the startup banner does", async () => {
    server = await createSluiceServer(
      loadServerConfig({ flags: { port: "0", host: "127.0.0.1", dataDir: dir } }),
      DEFAULT_SERVER_APPS,
    );
    const { url } = await server.listen();
    expect(url).not.toContain(":0");

    const challenge = await fetch(`${url}/mcp`, { method: "POST" });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const resource = await (await fetch(`${url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${url}/mcp`, authorization_servers: [url] });
    const issuer = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    expect(issuer).toMatchObject({ issuer: url, token_endpoint: `${url}/oauth/token` });
  });
});
