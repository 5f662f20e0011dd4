import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isPrivateAddress } from "../../adapters/net/private-addresses.js";
import { resolveClient } from "../../adapters/oauth/clients.js";
import { MemoryOAuthStore } from "../../adapters/oauth/memory-oauth-store.js";
import { OAuthProtocolError } from "../../adapters/oauth/oauth-error.js";
import { createSafeJsonFetcher } from "../../adapters/oauth/safe-fetch.js";

let server: Server | undefined;
afterEach(() => server?.close());

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuthProtocolError);
  expect((error as OAuthProtocolError).error).toBe("invalid_client");
  return (error as OAuthProtocolError).description;
}

describe("fetching a Client ID Metadata Document", () => {
  it("knows private, loopback, link-local and mapped addresses from public ones", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it("refuses http, private addresses (also behind a host name), redirects and large documents", async () => {
    const port = await serve((request, response) => {
      if (request.url === "/redirect") {
        response.writeHead(302, { location: "http://127.0.0.1:9/x" }).end();
      } else if (request.url === "/big") {
        response.end(JSON.stringify({ padding: "x".repeat(10_000) }));
      } else {
        response.end("{}");
      }
    });
    const strict = createSafeJsonFetcher();
    expect(await refusal(strict(new URL(`http://127.0.0.1:${port}/c.json`)))).toContain("https");
    const httpOnly = createSafeJsonFetcher({ allowHttp: true });
    expect(await refusal(httpOnly(new URL(`http://127.0.0.1:${port}/c.json`)))).toContain(
      "private address",
    );
    expect(await refusal(httpOnly(new URL(`http://[::1]:${port}/c.json`)))).toContain(
      "private address",
    );
    // A name resolving to loopback is checked when connecting, not only by its spelling.
    expect(await refusal(httpOnly(new URL(`http://localhost:${port}/c.json`)))).toContain(
      "could not be fetched",
    );
    const open = createSafeJsonFetcher({ allowHttp: true, allowPrivateAddresses: true });
    expect(await open(new URL(`http://localhost:${port}/c.json`))).toEqual({});
    expect(await refusal(open(new URL(`http://127.0.0.1:${port}/redirect`)))).toContain(
      "could not be fetched",
    );
    expect(await refusal(open(new URL(`http://127.0.0.1:${port}/big`)))).toContain(
      "larger than 5120 bytes",
    );
  });

  it("gives up on a server that does not answer in time", async () => {
    const port = await serve(() => {});
    const slow = createSafeJsonFetcher({
      allowHttp: true,
      allowPrivateAddresses: true,
      timeoutMs: 200,
    });
    expect(await refusal(slow(new URL(`http://127.0.0.1:${port}/c.json`)))).toContain(
      "could not be fetched",
    );
  });

  it("accepts a document only for its own URL, as a public client with valid redirect URIs", async () => {
    let document: Record<string, unknown> = {};
    const port = await serve((_request, response) => response.end(JSON.stringify(document)));
    const clientId = `http://127.0.0.1:${port}/client.json`;
    const deps = {
      store: new MemoryOAuthStore(),
      fetchJson: createSafeJsonFetcher({ allowHttp: true, allowPrivateAddresses: true }),
    };
    document = {
      client_id: clientId,
      client_name: "Zed",
      redirect_uris: ["http://127.0.0.1:1/cb"],
    };
    expect(await resolveClient(deps, clientId)).toEqual({
      clientId,
      clientName: "Zed",
      redirectUris: ["http://127.0.0.1:1/cb"],
      kind: "metadata-document",
    });
    document = { ...document, client_id: "https://other.example/client.json" };
    expect(await refusal(resolveClient(deps, clientId))).toContain("names another client_id");
    document = {
      ...document,
      client_id: clientId,
      token_endpoint_auth_method: "client_secret_basic",
    };
    expect(await refusal(resolveClient(deps, clientId))).toContain('"none"');
    document = { client_id: clientId, redirect_uris: ["http://evil.example/cb"] };
    expect(await refusal(resolveClient(deps, clientId))).toContain("must use https");
    expect(await refusal(resolveClient(deps, "slc_client_unknown"))).toBe("Unknown client_id.");
  });
});
