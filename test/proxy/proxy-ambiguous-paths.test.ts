import { beforeEach, describe, expect, it } from "vitest";
import { type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { poolRequest } from "./client.js";
import { type ForwardingFixture, HOST, useForwardingFixture } from "./forwarding-fixture.js";
import type { TestUpstream } from "./upstream.js";

/**
 * Paths an origin may resolve elsewhere than their text says (issue 23, item 1): refused with
 * 400 before a slot is taken or the origin sees anything, whatever key sends them. The
 * fixture's origin has the path prefix `/base/`, which such paths would climb out of.
 */
describe("pool proxy: ambiguous paths", () => {
  const fixture = useForwardingFixture();
  let h: Harness;
  let upstream: TestUpstream;
  let send: ForwardingFixture["send"];
  beforeEach(async () => {
    ({ h, upstream, send } = fixture);
  });
  const slotsTaken = (pool: string) =>
    h.governor.metrics.totals(pool, 0, Number.MAX_SAFE_INTEGER).requests;

  it.each([
    ["a servlet-style dot segment", "/..;/secret"],
    ["a dot segment with parameters", "/v1/..;jsessionid=1/secret"],
    ["an encoded slash after dots", "/..%2fsecret"],
    ["an encoded slash", "/v1/a%2Fb"],
    ["an encoded backslash", "/v1/a%5cb"],
    ["a plain dot-dot (the URL parser would resolve it)", "/v1/../secret"],
    ["a single dot", "/v1/./chat"],
    ["encoded dots", "/v1/%2e%2E/secret"],
    ["half-encoded dots", "/v1/.%2e/secret"],
    ["an encoded dot with parameters", "/v1/%2e;x/chat"],
    ["dots with an encoded semicolon", "/v1/..%3bx/secret"],
  ])("refuses %s (%s) with 400, before a slot and the origin", async (_what, path) => {
    const reply = await send({ host: HOST, method: "POST", path, body: "{}" });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toEqual({
      error: "invalid_request",
      message: expect.stringMatching(
        /not forwarded: the path has (a dot segment|an encoded slash)/,
      ),
    });
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(upstream.hits).toBe(0);
    expect(slotsTaken("llm")).toBe(0);
  });

  it.each([
    ["an encoded dot inside a name", "/v1/report%2Etxt"],
    ["path parameters on a plain segment", "/v1/chat;v=2"],
    ["three dots", "/v1/.../x"],
    ["dots inside a name", "/v1/a..b/.hidden"],
    ["an encoded slash in the query only", "/v1/chat?next=%2F..%2F&x=../y"],
  ])("forwards %s unchanged (%s)", async (_what, path) => {
    const reply = await send({ host: HOST, path });
    expect(reply.status).toBe(200);
    expect(upstream.seen.at(-1)?.url).toBe(`/base${path}`);
  });

  it("a read key scoped to a path prefix cannot leave it with a dot segment", async () => {
    await h.addPool({
      subdomain: "embed",
      origin: `${upstream.url}/base/v1`,
      maxConcurrent: 2,
      readMethods: ["POST"],
      readPaths: { POST: ["/v1/embeddings"] },
    });
    const readKey = (await h.mintKey("embed", { access: "read" })).plaintext;
    const post = (path: string) =>
      poolRequest(h.proxy.port, {
        host: `embed.${POOL_DOMAIN}`,
        method: "POST",
        path,
        headers: { "x-svc-key": readKey, "content-type": "application/json" },
        body: "{}",
      });
    expect((await post("/v1/embeddings")).status).toBe(200);
    expect(upstream.seen.at(-1)?.url).toBe("/base/v1/v1/embeddings");
    for (const path of [
      "/v1/embeddings/..;/chat",
      "/v1/embeddings/%2e%2e;/chat",
      "/v1/embeddings%2f..%2fchat",
    ]) {
      const reply = await post(path);
      expect(reply.status, path).toBe(400);
      expect(JSON.parse(reply.body).error).toBe("invalid_request");
    }
    expect(upstream.hits).toBe(1);
    expect(slotsTaken("embed")).toBe(1);
  });

  it("a caller without a valid key learns nothing from the path: 401 first", async () => {
    const reply = await poolRequest(h.proxy.port, { host: HOST, path: "/..;/secret" });
    expect(reply.status).toBe(401);
  });
});
