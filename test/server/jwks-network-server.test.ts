import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { jwtTokensPool } from "../catalog/fixtures.js";
import { httpRequest } from "./http-client.js";

/**
 * `--jwks-network` reaches the Lock API of a running server: by default a pool's JWKS URL on
 * 127.0.0.1 is refused (logged once, naming the setting); with `private` it is fetched.
 */
describe("--jwks-network in a running server", () => {
  let dir: string;
  let keyServer: Server;
  let keyFetches = 0;
  let token: string;

  beforeAll(async () => {
    const pair = await generateKeyPair("RS256", { extractable: true });
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256" };
    keyServer = createServer((_request, response) => {
      keyFetches++;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => keyServer.listen(0, "127.0.0.1", resolve));
    const jwksPort = (keyServer.address() as AddressInfo).port;
    token = await new SignJWT({ sub: "svc-a" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://idp.example")
      .setAudience("sluice")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(pair.privateKey);
    dir = mkdtempSync(join(tmpdir(), "sluice-jwks-network-"));
    const data = await openDataDir({ dataDir: dir });
    try {
      const { team } = await data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      await data.catalog.store.upsertPool(
        team.id,
        jwtTokensPool(`http://127.0.0.1:${jwksPort}/jwks`),
      );
    } finally {
      await data.close();
    }
  });
  afterAll(async () => {
    keyServer.closeAllConnections();
    await new Promise<void>((resolve) => keyServer.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function acquireWith(flags: { jwksNetwork?: string }) {
    const logLines: string[] = [];
    const server = await createSluiceServer(
      loadServerConfig({ flags: { port: "0", dataDir: dir, ...flags } }),
      { ...DEFAULT_SERVER_APPS, log: (line) => logLines.push(line) },
    );
    try {
      const { port } = await server.listen();
      const lock = () =>
        httpRequest({
          port,
          path: "/pools/tokens/lock/acquire",
          host: `localhost:${port}`,
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
        });
      return { first: await lock(), second: await lock(), logLines };
    } finally {
      await server.close();
    }
  }

  it("refuses a JWKS URL on 127.0.0.1 by default, logging it once", async () => {
    const { first, second, logLines } = await acquireWith({});
    for (const answer of [first, second]) {
      expect(answer.status).toBe(401);
      expect(answer.json()).toMatchObject({
        error: "unauthorized",
        message: "The token in authorization was refused: the key set could not be fetched.",
      });
    }
    expect(keyFetches).toBe(0);
    const refusals = logLines.filter((line) => line.includes("points at a private address"));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain("--jwks-network private");
    expect(refusals[0]).not.toContain(token);
    // The cause is named once, not again as the wrapped error's own cause.
    expect(refusals[0]?.split("points at a private address")).toHaveLength(2);
  });

  it("fetches it with jwksNetwork private", async () => {
    const { first, second } = await acquireWith({ jwksNetwork: "private" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(keyFetches).toBe(1);
  });
});
