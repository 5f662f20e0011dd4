import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { tempDir } from "../cli/cli-process.js";
import { httpRequest } from "./http-client.js";

let dir: string;
let cleanup: () => void;
let running: SluiceServer | undefined;

async function start(flags: Record<string, string> = {}) {
  const config = loadServerConfig({ flags: { port: "0", dataDir: dir, ...flags } });
  running = await createSluiceServer(config, { log: () => {} });
  return running.listen();
}

async function documentedServers(port: number, host: string): Promise<unknown> {
  const answer = await httpRequest({ port, path: "/api/v1/openapi.json", host });
  expect(answer.status).toBe(200);
  return (answer.json() as { servers: unknown }).servers;
}

beforeEach(() => {
  ({ dir, cleanup } = tempDir("sluice-openapi-servers-"));
  running = undefined;
});
afterEach(async () => {
  await running?.close();
  cleanup();
});

describe("the served OpenAPI document's servers", () => {
  it("name the configured base URL, whatever address the request reached", async () => {
    const { port } = await start({ baseUrl: "https://sluice.example.com" });
    expect(await documentedServers(port, "sluice.example.com")).toEqual([
      { url: "https://sluice.example.com", description: expect.any(String) },
    ]);
  });

  it("name the bound port when the server picked a free one", async () => {
    const { port, url } = await start();
    expect(await documentedServers(port, `localhost:${port}`)).toEqual([
      { url, description: expect.any(String) },
    ]);
  });
});
