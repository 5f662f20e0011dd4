import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusForError } from "../../adapters/hono/error-status.js";
import { PoolKeyNotFoundError, type ServerErrorReport } from "../../adapters/hono/index.js";
import {
  AbortedError,
  BudgetNotFoundError,
  ConflictError,
  ForbiddenError,
  InvalidArgumentError,
  PayloadTooLargeError,
  PoolNotFoundError,
  QueueTimeoutError,
  RejectedError,
  SlotCappedError,
  SlotNotFoundError,
  StoreUnavailableError,
  UnauthorizedError,
} from "../../src/errors.js";
import { httpRequest, rawExchange } from "../server/http-client.js";
import { expectErrorBody } from "./assertions.js";
import { type ControlApiHarness, startControlApi } from "./harness.js";

describe("statusForError", () => {
  it.each([
    [new InvalidArgumentError("bad"), 422],
    [new PoolNotFoundError("llm"), 404],
    [new BudgetNotFoundError("1"), 404],
    [new SlotNotFoundError("s"), 404],
    [new PoolKeyNotFoundError("1"), 404],
    [new RejectedError("concurrency", 100), 429],
    [new QueueTimeoutError(1000), 504],
    [new SlotCappedError(0), 409],
    [new StoreUnavailableError(), 503],
    [new UnauthorizedError(), 401],
    [new ForbiddenError(), 403],
    [new ConflictError("taken"), 409],
    [new PayloadTooLargeError(10), 413],
    [new AbortedError(), 499],
    [new TypeError("a bug"), 500],
    ["a thrown string", 500],
    [undefined, 500],
  ])("maps %s to %i", (error, status) => {
    expect(statusForError(error)).toBe(status);
  });
});

describe("server faults", () => {
  it("answers a bare 500 and logs where it happened, never the token", async () => {
    const reports: ServerErrorReport[] = [];
    const api = await startControlApi("sqlite", { logError: (report) => reports.push(report) });
    try {
      const token = await api.fullToken();
      // A closed database is a server fault the caller can do nothing about.
      await api.store.close();
      const response = await api.call("GET", "/api/v1/pools?x=1", { token });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({ message: "Internal server error." });
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({ method: "GET", path: "/api/v1/pools" });
      expect(reports[0]!.error).toBeInstanceOf(Error);
      const logged = `${JSON.stringify(reports[0])} ${(reports[0]!.error as Error).stack}`;
      expect(logged).not.toContain(token);
      expect(response.text).not.toMatch(/database|sqlite|stack/i);
    } finally {
      await api.close();
    }
  });
});

describe("bad input never causes a 500", () => {
  let api: ControlApiHarness;
  let token: string;

  beforeAll(async () => {
    api = await startControlApi("memory");
    token = await api.fullToken();
  });
  afterAll(async () => {
    await api.close();
  });

  it("refuses an oversized chunked body (no Content-Length) with 413", async () => {
    const chunk = new TextEncoder().encode(`{"label":"${"a".repeat(4096)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = await fetch(`${api.baseUrl}/api/v1/pools/embed/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ message: expect.any(String) });
    // The unread rest of the body makes the connection unusable: the server says so.
    expect(response.headers.get("connection")).toBe("close");
    for (let i = 0; i < 5; i++) {
      expect((await api.call("GET", "/api/v1/me", { token })).status).toBe(200);
    }
  });

  it("answers a body that stops short with 408 and closes the connection", async () => {
    const slow = await startControlApi("memory", { bodyTimeoutMs: 150 });
    try {
      const answer = await rawExchange(
        slow.port,
        `POST /api/v1/pools/embed/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${await slow.fullToken()}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 100\r\n\r\n{"la',
      );
      const split = answer.indexOf("\r\n\r\n");
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer.slice(0, split).toLowerCase()).toContain("connection: close");
      expect(JSON.parse(answer.slice(split + 4))).toEqual({ message: expect.any(String) });
    } finally {
      await slow.close();
    }
  });

  it("answers any JSON key-creation body with 201 or 422", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (body) => {
        const response = await api.call("POST", "/api/v1/pools/embed/keys", {
          token,
          rawBody: JSON.stringify(body),
          headers: { "content-type": "application/json" },
        });
        expect([201, 422]).toContain(response.status);
        if (response.status === 422)
          expect(Object.keys(response.body.errors).length).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });

  it("answers any field values in a key-creation body with 201 or 422", async () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.object());
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { label: value, access: value, expires_preset: value, expires_at: value },
          { requiredKeys: [] },
        ),
        async (body) => {
          const response = await api.call("POST", "/api/v1/pools/embed/keys", {
            token,
            json: body,
          });
          expect([201, 422]).toContain(response.status);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("answers any path segment with a JSON 200 or 404", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 80 }), async (text) => {
        const segment = encodeURIComponent(text);
        for (const [method, path] of [
          ["GET", `/api/v1/budgets/${segment}`],
          ["GET", `/api/v1/pools/${segment}`],
          ["DELETE", `/api/v1/pools/embed/keys/${segment}`],
        ] as const) {
          const response = await api.call(method, path, { token });
          expect(response.status).toBeLessThan(500);
          expect(response.body).toBeTypeOf("object");
        }
      }),
      { numRuns: 40 },
    );
  });

  it("answers any metrics query with 200 or 422", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), async (from, to) => {
        const query = `?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
        const response = await api.call("GET", `/api/v1/pools/llm/metrics${query}`, { token });
        expect([200, 422]).toContain(response.status);
      }),
      { numRuns: 60 },
    );
  });

  it("answers raw malformed path encodings without a 500", async () => {
    for (const path of ["/api/v1/pools/%E0%A4%A", "/api/v1/pools/%", "/api/v1/budgets/%ZZ/pools"]) {
      const response = await api.call("GET", path, { token });
      expect(response.status).toBeLessThan(500);
    }
    expectErrorBody(await api.call("GET", "/api/v1/pools/%00", { token }), 404);
  });

  it("refuses ambiguous paths with 400 instead of serving the route they resolve to", async () => {
    const port = Number(new URL(api.baseUrl).port);
    const authorization = `Bearer ${token}`;
    for (const path of [
      "/api/v1/pools/%2e%2e/budgets",
      "/api/v1/pools/embed/%2E%2E/%2e%2e/budgets",
      "/api/v1/pools/./embed",
      "/api/v1/pools/embed%2Fkeys",
    ]) {
      const answer = await httpRequest({
        port,
        path,
        host: "127.0.0.1",
        headers: { authorization },
      });
      expect(answer.status, path).toBe(400);
      expect(answer.json(), path).toEqual({ message: expect.stringContaining("Ambiguous path") });
    }
    const plain = await httpRequest({
      port,
      path: "/api/v1/budgets",
      host: "127.0.0.1",
      headers: { authorization },
    });
    expect(plain.status).toBe(200);
  });
});
