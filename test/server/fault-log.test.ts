import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { lockAppForServer } from "../../adapters/server/traffic-apps.js";
import type { Governor } from "../../src/governor/types.js";
import { poolInput } from "./fixtures.js";
import { httpRequest } from "./http-client.js";

/** A governor whose acquire fails the way a bug would: a plain Error, not a Sluice error. */
function brokenAcquire(governor: Governor): Governor {
  return new Proxy(governor, {
    get(target, property, receiver) {
      if (property === "acquire") {
        return async () => {
          throw new Error("acquire exploded while holding slc_key_notAKeyButSecretShaped");
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

describe("a fault of the Lock API in the server log", () => {
  let dir: string;
  let server: SluiceServer;
  let port: number;
  const lines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-fault-"));
    const data = await openDataDir({ dataDir: dir });
    const team = await data.catalog.store.createTeam({ name: "Acme", slug: "acme" });
    await data.catalog.store.upsertPool(team.id, poolInput("open", { requireKey: false }));
    data.close();
    server = await createSluiceServer(loadServerConfig({ flags: { port: "0", dataDir: dir } }), {
      lockApp: (deps) => lockAppForServer({ ...deps, governor: brokenAcquire(deps.governor) }),
      log: (line) => lines.push(line),
    });
    ({ port } = await server.listen());
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is one text line with the pool, the request id, the cause and where it happened", async () => {
    const answer = await httpRequest({
      port,
      path: "/pools/open/lock/acquire",
      host: `localhost:${port}`,
      method: "POST",
      headers: { "x-request-id": "req-fault-1" },
    });
    expect(answer.status).toBe(500);
    const line = lines.find((text) => text.includes("requestId=req-fault-1"));
    expect(line).toMatch(
      /^Request failed method=POST host=localhost:\d+ path=\/pools\/open\/lock\/acquire status=500 pool=open requestId=req-fault-1 cause="acquire exploded while holding slc_\*\*\*" stack="at .*"$/,
    );
    expect(line).not.toContain("notAKeyButSecretShaped");
  });
});
