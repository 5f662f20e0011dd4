import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { tempDir } from "../cli/cli-process.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "../redis/redis-harness.js";
import { TcpProxy } from "../redis/tcp-proxy.js";
import { poolInput } from "./fixtures.js";
import { httpRequest } from "./http-client.js";

const redisUp = await requireRedis("readiness with Redis");
const prefix = uniquePrefix("readyz");

/** `/readyz` of a server whose Redis slot store sits behind a proxy the test can cut. */
describe.skipIf(!redisUp)("readiness of a server on Redis", () => {
  let proxy: TcpProxy;
  let server: SluiceServer;
  let port: number;
  let cleanup: () => void;
  const readyz = () => httpRequest({ port, path: "/readyz", host: `localhost:${port}` });

  beforeAll(async () => {
    proxy = await TcpProxy.start(new URL(REDIS_URL));
    const made = tempDir("sluice-readyz-");
    cleanup = made.cleanup;
    const data = await openDataDir({ dataDir: made.dir });
    const team = await data.catalog.store.createTeam({ name: "Acme", slug: "acme" });
    await data.catalog.store.upsertPool(team.id, poolInput("chat"));
    data.close();
    server = await createSluiceServer(
      loadServerConfig({
        flags: { port: "0", dataDir: made.dir, redisUrl: proxy.url, redisPrefix: prefix },
      }),
    );
    ({ port } = await server.listen());
  });

  afterAll(async () => {
    await proxy?.resume();
    await server?.close();
    await proxy?.stop();
    cleanup?.();
    await deleteKeys(prefix);
  });

  it("is ready while Redis answers, 503 naming redis while it is away, ready again after", async () => {
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(ready.json()).toMatchObject({ status: "ready", checks: { redis: "ok", catalog: "ok" } });

    await proxy.stop();
    const away = await readyz();
    expect(away.status).toBe(503);
    const body = away.json<{ status: string; failing: string[]; message: string }>();
    expect(body.status).toBe("not_ready");
    expect(body.failing).toEqual(["redis"]);
    expect(body.message).toMatch(/^Not ready: redis (unavailable|unreachable)\.$/);
    // Liveness does not depend on Redis: the process still serves.
    expect((await httpRequest({ port, path: "/healthz", host: `localhost:${port}` })).status).toBe(
      200,
    );

    await proxy.resume();
    await expect.poll(async () => (await readyz()).status, { timeout: 15_000 }).toBe(200);
  });
});
