import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import * as jose from "jose";
import { afterEach, describe, expect, it } from "vitest";
import {
  KeySetUnavailableError,
  remoteKeySet,
} from "../../adapters/hono/caller/remote-key-sets.js";

/** A key server on a real socket that counts requests and answers as `state.up` says. */
async function keyServer(jwks: unknown) {
  const state = { up: false, requests: 0 };
  const server: Server = createServer((_request, response) => {
    state.requests += 1;
    if (!state.up) {
      response.writeHead(503).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/certs`;
  return { state, url, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe("a key set during its identity provider's outage", () => {
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it("refuses at once without asking again until the retry interval passes, then recovers", async () => {
    const { publicKey } = await jose.generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "ES256" };
    const idp = await keyServer({ keys: [jwk] });
    closing.push(idp.close);
    const reported: KeySetUnavailableError[] = [];
    const keys = remoteKeySet(jose, idp.url, {
      network: "private",
      retryAfterFailureMs: 400,
      onUnavailable: (error) => reported.push(error),
    });
    const header = { alg: "ES256", kid: "k1" };

    await expect(keys(header)).rejects.toBeInstanceOf(KeySetUnavailableError);
    expect(idp.state.requests).toBe(1);
    // Within the interval: the same refusal, no request, although the provider is back.
    idp.state.up = true;
    await expect(keys(header)).rejects.toBeInstanceOf(KeySetUnavailableError);
    await expect(keys(header)).rejects.toBeInstanceOf(KeySetUnavailableError);
    expect(idp.state.requests).toBe(1);
    expect(reported).toHaveLength(1);

    await sleep(450);
    expect(await keys(header)).toBeDefined();
    expect(idp.state.requests).toBe(2);
  });

  it("asks again after a failure once the interval is over, and reports a new outage once", async () => {
    const idp = await keyServer({ keys: [] });
    closing.push(idp.close);
    const reported: KeySetUnavailableError[] = [];
    const keys = remoteKeySet(jose, idp.url, {
      network: "private",
      retryAfterFailureMs: 100,
      onUnavailable: (error) => reported.push(error),
    });
    const header = { alg: "ES256", kid: "k1" };
    await expect(keys(header)).rejects.toBeInstanceOf(KeySetUnavailableError);
    await sleep(150);
    await expect(keys(header)).rejects.toBeInstanceOf(KeySetUnavailableError);
    expect(idp.state.requests).toBe(2);
    // Still the same outage: the operator heard of it once.
    expect(reported).toHaveLength(1);
  });
});
