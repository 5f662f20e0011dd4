import { afterEach, beforeEach } from "vitest";
import { createHarness, type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { type PoolReply, type PoolRequest, poolRequest } from "./client.js";
import { TestUpstream } from "./upstream.js";

/** The host of the fixture's pool. */
export const HOST = `llm.${POOL_DOMAIN}`;
/** The managed credential the fixture's pool injects upstream. */
const UPSTREAM_SECRET = "Bearer sk-upstream-secret";

/** What {@link useForwardingFixture} gives each test (fresh per test). */
export interface ForwardingFixture {
  h: Harness;
  upstream: TestUpstream;
  /** A write key of pool "llm". */
  key: string;
  /** A request through the proxy with the key in `X-Svc-Key`. */
  send(options: PoolRequest): Promise<PoolReply>;
}

/**
 * Registers `beforeEach`/`afterEach` for proxy tests: a local upstream, the harness, pool
 * "llm" with origin `{upstream}/base/`, 2 slots and a managed credential, and a key.
 *
 * @example
 * ```ts
 * const fixture = useForwardingFixture();
 * it("...", async () => { const reply = await fixture.send({ host: HOST, path: "/x" }); });
 * ```
 */
export function useForwardingFixture(): ForwardingFixture {
  const fixture = {} as ForwardingFixture;
  beforeEach(async () => {
    fixture.upstream = await new TestUpstream().start();
    fixture.h = await createHarness();
    await fixture.h.addPool({
      subdomain: "llm",
      origin: `${fixture.upstream.url}/base/`,
      maxConcurrent: 2,
      credential: fixture.h.catalog.sealCredential("authorization", UPSTREAM_SECRET),
    });
    fixture.key = (await fixture.h.mintKey("llm")).plaintext;
    fixture.send = (options) =>
      poolRequest(fixture.h.proxy.port, {
        ...options,
        headers: { "x-svc-key": fixture.key, ...options.headers },
      });
  });
  afterEach(async () => {
    await fixture.h.close();
    await fixture.upstream.stop();
  });
  return fixture;
}
