import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHarness, type Harness, readBody } from "./harness.js";

const LISTED = "https://app.test";

/**
 * Issue 23, item 3: a web page elsewhere cannot use the Lock API through a browser. Bodies
 * must be JSON (415 otherwise: "simple" cross-site POSTs carry text/plain, forms or no type),
 * and a request whose Origin is neither the server's own nor listed is refused (403) before
 * anything else; listed origins get CORS answers, preflights included.
 */
describe("Lock API cross-site requests", () => {
  let h: Harness;
  let key: string;

  beforeEach(async () => {
    h = await createHarness({ corsOrigins: [LISTED] });
    // An open pool: the case a cross-site POST could fill without any key.
    await h.addPool({ subdomain: "open", maxConcurrent: 1, requireKey: false });
    await h.addPool({ subdomain: "llm", maxConcurrent: 1 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => h.close());

  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${h.lock.url}${path}`, { method: "POST", headers, body });
  const held = async (pool: string) => (await h.governor.status(pool)).held;

  describe("body media type", () => {
    it.each([
      ["text/plain", { "content-type": "text/plain" }],
      ["a form", { "content-type": "application/x-www-form-urlencoded" }],
      ["multipart", { "content-type": "multipart/form-data; boundary=x" }],
      ["no type at all", {}],
    ])(
      "an acquire body sent as %s is 415 unsupported_media_type and takes no slot",
      async (_what, headers) => {
        const body = new Blob(['{"waitMs":0}']);
        const response = await fetch(`${h.lock.url}/pools/open/lock/acquire`, {
          method: "POST",
          headers,
          body,
        });
        expect(response.status).toBe(415);
        expect(await readBody(response)).toEqual({
          error: "unsupported_media_type",
          message: expect.stringContaining("Content-Type: application/json"),
        });
        expect(await held("open")).toBe(0);
      },
    );

    it("JSON with parameters, and no body at all, are fine", async () => {
      const json = await post(
        "/pools/open/lock/acquire",
        { "content-type": "Application/JSON; charset=utf-8" },
        '{"waitMs":0}',
      );
      expect(json.status).toBe(200);
      const { slotId } = await readBody(json);
      expect((await post(`/pools/open/lock/${slotId}/release`, {})).status).toBe(200);
      expect((await post("/pools/open/lock/acquire", {})).status).toBe(200);
    });

    it("an empty chunked body without a type (Node's http client) is no body", async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const outgoing = httpRequest(
          {
            host: "127.0.0.1",
            port: h.lock.port,
            method: "POST",
            path: "/pools/open/lock/acquire",
            headers: { "transfer-encoding": "chunked" },
          },
          (incoming) => {
            incoming.resume();
            resolve(incoming.statusCode ?? 0);
          },
        );
        outgoing.once("error", reject);
        outgoing.end();
      });
      expect(status).toBe(200);
    });

    it("a renew with a text body is 415; a release with one still releases, and says so", async () => {
      const { slotId } = await readBody(
        await post("/pools/llm/lock/acquire", { "x-svc-key": key }),
      );
      const renew = await post(
        `/pools/llm/lock/${slotId}/renew`,
        { "x-svc-key": key, "content-type": "text/plain" },
        "{}",
      );
      expect(renew.status).toBe(415);
      const release = await post(
        `/pools/llm/lock/${slotId}/release`,
        { "x-svc-key": key, "content-type": "text/plain" },
        '{"status":200}',
      );
      expect(release.status).toBe(415);
      expect(await readBody(release)).toMatchObject({
        error: "unsupported_media_type",
        released: true,
      });
      expect(await held("llm")).toBe(0);
    });
  });

  describe("Origin", () => {
    it("refuses a foreign origin with 403 before anything else: no slot, no key check", async () => {
      const foreign: Record<string, string>[] = [
        { origin: "https://evil.test" },
        { origin: "https://evil.test", "x-svc-key": key },
        { origin: "null" },
        // A listed origin's look-alike, and the same host on another scheme or port.
        { origin: "https://app.test.evil.test" },
        { origin: "http://app.test" },
        { origin: `http://127.0.0.1:${h.lock.port + 1}` },
      ];
      for (const headers of foreign) {
        const response = await post("/pools/open/lock/acquire", {
          ...headers,
          "content-type": "application/json",
        });
        expect(response.status, headers.origin).toBe(403);
        expect(await readBody(response)).toEqual({
          error: "unauthorized",
          message: expect.stringContaining("--cors-origins"),
        });
        expect(response.headers.get("access-control-allow-origin")).toBeNull();
      }
      const missing = await post("/pools/nope/lock/acquire", { origin: "https://evil.test" });
      expect(missing.status).toBe(403);
      expect(await held("open")).toBe(0);
    });

    it("admits the request's own origin and listed ones, with CORS answer headers", async () => {
      for (const origin of [h.lock.url, LISTED]) {
        const response = await post("/pools/llm/lock/acquire", { origin, "x-svc-key": key });
        expect(response.status, origin).toBe(200);
        expect(response.headers.get("access-control-allow-origin")).toBe(origin);
        expect(response.headers.get("access-control-expose-headers")).toContain(
          "x-svc-remaining-slots",
        );
        expect(response.headers.get("vary")).toContain("origin");
        const { slotId } = await readBody(response);
        await post(`/pools/llm/lock/${slotId}/release`, { origin, "x-svc-key": key });
      }
      // Refusals are readable by the listed page too (here a 401: no key).
      const refused = await post("/pools/llm/lock/acquire", { origin: LISTED });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("access-control-allow-origin")).toBe(LISTED);
    });

    it("answers CORS preflights: 204 for listed origins, 403 for others; a plain OPTIONS stays 405", async () => {
      const preflight = (origin: string, path = "/pools/llm/lock/acquire") =>
        fetch(`${h.lock.url}${path}`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, x-svc-key",
          },
        });
      for (const path of ["/pools/llm/lock/acquire", "/pools/llm/lock/some-slot/release"]) {
        const ok = await preflight(LISTED, path);
        expect(ok.status, path).toBe(204);
        expect(ok.headers.get("access-control-allow-origin")).toBe(LISTED);
        expect(ok.headers.get("access-control-allow-methods")).toBe("POST");
        expect(ok.headers.get("access-control-allow-headers")).toContain("x-svc-key");
        expect(ok.headers.get("access-control-allow-headers")).toContain("content-type");
      }
      const foreign = await preflight("https://evil.test");
      expect(foreign.status).toBe(403);
      expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
      const plain = await fetch(`${h.lock.url}/pools/llm/lock/acquire`, { method: "OPTIONS" });
      expect(plain.status).toBe(405);
      expect(plain.headers.get("allow")).toBe("POST");
    });
  });
});
