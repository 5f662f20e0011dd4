import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { beforeEach, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { type Harness, POOL_DOMAIN, waitFor } from "../lock-api/harness.js";
import { poolRequest, startPoolRequest } from "./client.js";
import { type ForwardingFixture, HOST, useForwardingFixture } from "./forwarding-fixture.js";
import type { TestUpstream } from "./upstream.js";

describe("pool proxy forwarding", () => {
  const fixture = useForwardingFixture();
  let h: Harness;
  let upstream: TestUpstream;
  let send: ForwardingFixture["send"];
  beforeEach(async () => {
    ({ h, upstream, send } = fixture);
  });

  it("sends the request to origin + path + query, body included, and answers with the origin's response", async () => {
    const reply = await send({
      host: HOST,
      method: "POST",
      path: "/v1/chat?stream=false&x=%2F",
      headers: { "content-type": "application/json" },
      body: '{"prompt":"hi"}',
    });
    expect(reply.status).toBe(200);
    const seen = JSON.parse(reply.body);
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/base/v1/chat?stream=false&x=%2F");
    expect(seen.body).toBe('{"prompt":"hi"}');
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen.headers["x-forwarded-host"]).toBe(HOST);
    expect(seen.headers["x-forwarded-proto"]).toBe("http");
    expect(seen.headers.forwarded).toBe(`for=127.0.0.1;host=${HOST};proto=http`);
    expect(seen.headers["x-real-ip"]).toBe("127.0.0.1");
    expect(seen.headers.via).toBe("1.1 sluice");
    expect(reply.headers["x-svc-remaining-slots"]).toBe("1");
    expect(reply.headers["x-svc-effective-limit"]).toBe("2");
    expect(reply.headers["x-svc-queued-ms"]).toBe("0");
    expect((await h.governor.status("llm")).held).toBe(0);
    expect((await h.accessLog.list("llm"))[0]).toMatchObject({
      outcome: "admitted",
      source: "proxy",
      upstreamStatus: 200,
    });
  });

  it("appends its hop to a caller's Forwarded and X-Forwarded-For, and never passes on its X-Real-IP", async () => {
    const reply = await send({
      host: HOST,
      path: "/who",
      headers: {
        forwarded: "for=203.0.113.9",
        "x-forwarded-for": "203.0.113.9",
        "x-real-ip": "203.0.113.9",
      },
    });
    const seen = JSON.parse(reply.body);
    // The last element is Sluice's own: an origin that trusts Sluice reads that one.
    expect(seen.headers.forwarded).toBe(`for=203.0.113.9, for=127.0.0.1;host=${HOST};proto=http`);
    expect(seen.headers["x-forwarded-for"]).toBe("203.0.113.9, 127.0.0.1");
    expect(seen.headers["x-real-ip"]).toBe("127.0.0.1");
  });

  it("forwards a GET request's body (some APIs search with one)", async () => {
    const reply = await send({
      host: HOST,
      method: "GET",
      path: "/search",
      // Node's client frames a GET body only when told its length.
      headers: { "content-type": "application/json", "content-length": "26" },
      body: '{"query":{"match_all":{}}}',
    });
    expect(reply.status).toBe(200);
    const seen = JSON.parse(reply.body);
    expect(seen.body).toBe('{"query":{"match_all":{}}}');
    expect(seen.headers["content-length"]).toBe("26");
  });

  it("injects the managed credential upstream, strips the caller's key, and never echoes the credential back", async () => {
    upstream.on("/base/echo-credential", (request, response) => {
      response.writeHead(200, {
        authorization: request.headers.authorization ?? "",
        "x-debug-auth": `seen ${request.headers.authorization}`,
        // The token alone, without its scheme, and URL-encoded in a redirect target.
        "x-token-only": String(request.headers.authorization).replace(/^Bearer /, ""),
        location: `https://origin.test/next?k=${encodeURIComponent(String(request.headers.authorization))}`,
        "x-harmless": "kept",
        "content-type": "text/plain",
      });
      response.end("ok");
    });
    const reply = await send({
      host: HOST,
      path: "/echo-credential",
      headers: { authorization: "Bearer caller-own-token", "x-svc-no-queue": "1" },
    });
    const seen = upstream.seen[0];
    expect(seen?.headers.authorization).toBe("Bearer sk-upstream-secret");
    expect(seen?.headers["x-svc-key"]).toBeUndefined();
    expect(seen?.headers["x-svc-no-queue"]).toBeUndefined();
    expect(reply.status).toBe(200);
    expect(reply.headers.authorization).toBeUndefined();
    expect(reply.headers["x-debug-auth"]).toBeUndefined();
    expect(reply.headers["x-token-only"]).toBeUndefined();
    expect(reply.headers.location).toBeUndefined();
    expect(reply.headers["x-harmless"]).toBe("kept");
    expect(reply.rawHeaders.join("\n")).not.toContain("sk-upstream");
    expect(reply.rawHeaders.join("\n")).not.toContain("sk-upstream-secret");
    expect(reply.body).not.toContain("sk-upstream-secret");
    // Nor is it written to the access log.
    await h.accessLog.flush();
    const rows = h.database.prepare("SELECT * FROM access_log").all();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain("sk-upstream-secret");
  });

  it("drops an echo of the credential URL-encoded with lower-case escapes too", async () => {
    await h.addPool({
      subdomain: "enc",
      origin: upstream.url,
      maxConcurrent: 1,
      credential: h.catalog.sealCredential("authorization", "Bearer sk-probe/secret+val=9"),
    });
    upstream.on("/echo-encoded", (request, response) => {
      const lowerEscapes = (text: string) =>
        encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase());
      response.writeHead(200, {
        "x-lower-whole": lowerEscapes(String(request.headers.authorization)),
        "x-lower-token": lowerEscapes("sk-probe/secret+val=9"),
        "x-harmless": "kept",
      });
      response.end("ok");
    });
    const reply = await poolRequest(h.proxy.port, {
      host: `enc.${POOL_DOMAIN}`,
      path: "/echo-encoded",
      headers: { "x-svc-key": (await h.mintKey("enc")).plaintext },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers["x-lower-whole"]).toBeUndefined();
    expect(reply.headers["x-lower-token"]).toBeUndefined();
    expect(reply.headers["x-harmless"]).toBe("kept");
  });

  it("a pool key in Authorization is never sent upstream", async () => {
    await h.addPool({
      subdomain: "byauth",
      origin: upstream.url,
      maxConcurrent: 2,
      allowAuthorizationHeader: true,
    });
    const authKey = (await h.mintKey("byauth")).plaintext;
    const reply = await poolRequest(h.proxy.port, {
      host: `byauth.${POOL_DOMAIN}`,
      headers: { authorization: `Bearer ${authKey}` },
    });
    expect(reply.status).toBe(200);
    expect(upstream.seen[0]?.headers.authorization).toBeUndefined();
    // Any other shape that carries the key is not read as one, and still never forwarded.
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString("base64")}`;
    const shapes = [
      `Bearer ${authKey} extra`,
      `Token ${authKey}`,
      authKey,
      // Basic credentials hide the key in base64, as the user or as the password.
      basic(`user:${authKey}`),
      basic(`${authKey}:x`),
      `basic  ${Buffer.from(`:${authKey}`).toString("base64url")}`,
    ];
    for (const authorization of shapes) {
      const other = await poolRequest(h.proxy.port, {
        host: `byauth.${POOL_DOMAIN}`,
        headers: { "x-svc-key": authKey, authorization },
      });
      expect(other.status).toBe(200);
    }
    expect(upstream.seen).toHaveLength(1 + shapes.length);
    for (const seen of upstream.seen) expect(seen.headers.authorization).toBeUndefined();
  });

  it("a Control API token is refused (401) on any pool and never reaches the origin", async () => {
    await h.addPool({
      subdomain: "open",
      origin: upstream.url,
      maxConcurrent: 2,
      requireKey: false,
    });
    const token = await h.mintApiToken();
    const carriers: Record<string, string>[] = [
      { authorization: `Bearer ${token}` },
      { authorization: `Service ${token}` },
      { authorization: `Token ${token}` },
      { authorization: token },
      { authorization: `Bearer ${token} extra` },
      { authorization: `Basic ${Buffer.from(`me:${token}`).toString("base64")}` },
      { "x-svc-key": token },
    ];
    for (const headers of carriers) {
      const reply = await poolRequest(h.proxy.port, { host: `open.${POOL_DOMAIN}`, headers });
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toMatchObject({ error: "unauthorized" });
      expect(reply.body).not.toContain(token);
    }
    expect(upstream.seen).toHaveLength(0);
    // The caller's own upstream token still passes on an open pool.
    const own = await poolRequest(h.proxy.port, {
      host: `open.${POOL_DOMAIN}`,
      headers: { authorization: "Bearer sk-caller-own" },
    });
    expect(own.status).toBe(200);
    expect(upstream.seen[0]?.headers.authorization).toBe("Bearer sk-caller-own");
  });

  it("drops hop-by-hop headers both ways (RFC 9110 7.6.1)", async () => {
    upstream.on("/base/hop", (_request, response) => {
      response.setHeader("connection", "x-upstream-hop");
      response.setHeader("x-upstream-hop", "1");
      response.setHeader("keep-alive", "timeout=99");
      response.setHeader("proxy-authenticate", "Basic");
      response.setHeader("x-end-to-end", "kept");
      response.setHeader("x-svc-rejected-by", "forged");
      response.end("ok");
    });
    const reply = await send({
      host: HOST,
      path: "/hop",
      headers: {
        connection: "keep-alive, x-caller-hop",
        "x-caller-hop": "1",
        "keep-alive": "timeout=5",
        te: "trailers",
        "proxy-authorization": "Basic abc",
        "x-end-to-end": "kept",
        via: "1.1 edge-cache",
      },
    });
    const seen = upstream.seen[0]?.headers ?? {};
    // A gateway appends itself to Via (RFC 9110 7.6.3).
    expect(seen.via).toBe("1.1 edge-cache, 1.1 sluice");
    expect(seen["x-caller-hop"]).toBeUndefined();
    expect(seen.te).toBeUndefined();
    expect(seen["proxy-authorization"]).toBeUndefined();
    expect(seen["keep-alive"]).toBeUndefined();
    expect(seen["x-end-to-end"]).toBe("kept");
    expect(reply.headers["x-upstream-hop"]).toBeUndefined();
    // Sluice's own connection may be kept alive; the origin's hop must not show through.
    expect(reply.headers["keep-alive"]).not.toBe("timeout=99");
    expect(reply.headers["proxy-authenticate"]).toBeUndefined();
    expect(reply.headers["x-svc-rejected-by"]).toBeUndefined();
    expect(reply.headers["x-end-to-end"]).toBe("kept");
  });

  it("passes header bytes beyond ASCII through unchanged, and repeated headers as separate lines", async () => {
    upstream.on("/base/bytes", (_request, response) => {
      response.setHeader("x-name", "caf\u00e9 \u00ff");
      response.setHeader("set-cookie", ["a=1", "b=2"]);
      // With a Buffer body Node writes the head as latin1: bytes E9 and FF, not UTF-8.
      response.end(Buffer.from("ok"));
    });
    const reply = await send({ host: HOST, path: "/bytes" });
    expect(reply.status).toBe(200);
    expect(reply.headers["x-name"]).toBe("caf\u00e9 \u00ff");
    expect(reply.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
  });

  it("a read-only key's POST gets 403 with zero upstream hits and no slot taken", async () => {
    const readKey = (await h.mintKey("llm", { access: "read" })).plaintext;
    const reply = await poolRequest(h.proxy.port, {
      host: HOST,
      method: "POST",
      path: "/v1/chat",
      headers: { "x-svc-key": readKey },
      body: "{}",
    });
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "unauthorized" });
    expect(upstream.hits).toBe(0);
    expect(h.governor.metrics.totals("llm", 0, Number.MAX_SAFE_INTEGER).requests).toBe(0);
    expect(await h.accessLog.list("llm")).toEqual([]);
    const get = await poolRequest(h.proxy.port, { host: HOST, headers: { "x-svc-key": readKey } });
    expect(get.status).toBe(200);
    expect(h.governor.metrics.totals("llm", 0, Number.MAX_SAFE_INTEGER).requests).toBe(1);
  });

  it("a 429 from Sluice is marked; an upstream 429 passes through untouched", async () => {
    upstream.on("/base/limited", (_request, response) => {
      response.writeHead(429, { "retry-after": "7", "content-type": "text/plain" });
      response.end("upstream says slow down");
    });
    const upstream429 = await send({ host: HOST, path: "/limited" });
    expect(upstream429.status).toBe(429);
    expect(upstream429.body).toBe("upstream says slow down");
    expect(upstream429.headers["retry-after"]).toBe("7");
    expect(upstream429.headers["x-svc-rejected-by"]).toBeUndefined();
    expect(upstream429.headers["x-svc-effective-limit"]).toBeDefined();

    // The upstream's 429 and Retry-After taught the pool to pause: Sluice now refuses a
    // caller that will not wait.
    const sluice429 = await send({
      host: HOST,
      path: "/anything",
      headers: { "x-svc-no-queue": "1" },
    });
    expect(sluice429.status).toBe(429);
    expect(sluice429.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(sluice429.headers["retry-after"]).toBe("7");
    expect(sluice429.headers["x-svc-remaining-slots"]).toBe("0");
    expect(Number(sluice429.headers["x-svc-effective-limit"])).toBeGreaterThan(0);
    expect(JSON.parse(sluice429.body)).toMatchObject({ error: "too_many_requests" });
    expect(upstream.hits).toBe(1);

    // The access log tells them apart: the upstream's 429 on the admitted attempt, none on
    // the attempt Sluice refused.
    expect(await h.accessLog.list("llm")).toEqual([
      expect.objectContaining({ outcome: "rejected", upstreamStatus: null }),
      expect.objectContaining({ outcome: "admitted", upstreamStatus: 429 }),
    ]);
  });

  it("the origin's rate-limit headers are reported as the outcome: proxy traffic teaches the RPM", async () => {
    upstream.on("/base/rated", (_request, response) => {
      response.writeHead(200, {
        "x-ratelimit-limit-requests": "90",
        "x-ratelimit-remaining-requests": "89",
        "x-ratelimit-reset-requests": "1s",
        "content-type": "text/plain",
      });
      response.end("ok");
    });
    expect((await h.governor.status("llm")).learned.rpm).toBeNull();
    const reply = await send({ host: HOST, path: "/rated" });
    expect(reply.status).toBe(200);
    expect(reply.headers["x-ratelimit-limit-requests"]).toBe("90");
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    expect((await h.governor.status("llm")).learned.rpm).toBe(90);
  });

  it("Sluice answers 429 itself when every slot is busy (fail-fast)", async () => {
    await h.governor.acquire("llm");
    await h.governor.acquire("llm");
    const reply = await send({
      host: HOST,
      path: "/v1/models",
      headers: { "x-svc-no-queue": "1" },
    });
    expect(reply.status).toBe(429);
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(reply.headers["retry-after"]).toBe("1");
    expect(upstream.hits).toBe(0);
    expect((await h.accessLog.list("llm"))[0]).toMatchObject({
      outcome: "rejected",
      source: "proxy",
    });
  });

  /** A pool of one slot whose requests may take 5 s (a ManualClock's), and a key of it. */
  async function poolTimingOutAt5s(subdomain: string): Promise<string> {
    await h.addPool({
      subdomain,
      origin: upstream.url,
      maxConcurrent: 1,
      requestTimeoutMs: 5_000,
      termMs: 5_000,
      renewIntervalMs: 1_000,
    });
    return (await h.mintKey(subdomain)).plaintext;
  }

  it("an origin slower than the pool's request timeout gets 504 upstream_timeout and frees the slot", async () => {
    const clock = h.manualClock as ManualClock;
    const slowKey = await poolTimingOutAt5s("slow");
    upstream.on("/hang", () => {});
    const pending = poolRequest(h.proxy.port, {
      host: `slow.${POOL_DOMAIN}`,
      path: "/hang",
      headers: { "x-svc-key": slowKey },
    });
    await waitFor(() => upstream.hits === 1);
    await clock.advance(5_000);
    const reply = await pending;
    expect(reply.status).toBe(504);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "upstream_timeout" });
    // Sluice's own 504, not one the origin sent.
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(reply.headers["x-svc-effective-limit"]).toBe("1");
    expect(reply.headers["x-svc-queued-ms"]).toBe("0");
    expect((await h.governor.status("slow")).held).toBe(0);
  });

  it("a caller whose upload stalls gets 408 request_timeout, not the origin's 504", async () => {
    const clock = h.manualClock as ManualClock;
    const uploadKey = await poolTimingOutAt5s("upload");
    // The origin waits for the whole body, which never comes.
    upstream.onStream("/upload", () => {});
    const socket = connect(h.proxy.port, "127.0.0.1");
    socket.write(
      `POST /upload HTTP/1.1\r\nHost: upload.${POOL_DOMAIN}\r\nX-Svc-Key: ${uploadKey}\r\n` +
        "Content-Length: 100\r\n\r\nabc",
    );
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    const closed = new Promise((resolve) => socket.once("close", resolve));
    await waitFor(() => upstream.hits === 1);
    await clock.advance(5_000);
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"error":"request_timeout"');
    expect(answer).toContain("x-svc-rejected-by: sluice");
    expect((await h.governor.status("upload")).held).toBe(0);
  });

  it("a timeout or a client leaving while the origin connection is still being set up ends at once", async () => {
    const clock = h.manualClock as ManualClock;
    // Accepts TCP, never answers the TLS handshake: the connect itself stalls.
    const stalled = new Set<Socket>();
    const stall = createServer((socket) => {
      stalled.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => stall.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = stall.address() as AddressInfo;
      await h.addPool({
        subdomain: "stalled",
        origin: `https://127.0.0.1:${port}`,
        maxConcurrent: 1,
        requestTimeoutMs: 5_000,
        termMs: 5_000,
        renewIntervalMs: 1_000,
      });
      const stalledHost = `stalled.${POOL_DOMAIN}`;
      const stalledKey = (await h.mintKey("stalled")).plaintext;
      const pending = poolRequest(h.proxy.port, {
        host: stalledHost,
        headers: { "x-svc-key": stalledKey },
      });
      await waitFor(() => stalled.size === 1);
      await clock.advance(5_000);
      const reply = await pending;
      expect(reply.status).toBe(504);
      expect((await h.governor.status("stalled")).held).toBe(0);

      const leaving = startPoolRequest(h.proxy.port, {
        host: stalledHost,
        headers: { "x-svc-key": stalledKey },
      });
      await waitFor(async () => (await h.governor.status("stalled")).held === 1);
      leaving.request.destroy();
      // Well within undici's own 10 s connect timeout.
      await waitFor(async () => (await h.governor.status("stalled")).held === 0, 2_000);
    } finally {
      for (const socket of stalled) socket.destroy();
      stall.close();
    }
  });

  it("a 304 that announces a length passes through as a 304", async () => {
    upstream.on("/base/cached", (_request, response) => {
      response.writeHead(304, { "content-length": "50", etag: '"v1"' });
      response.end();
    });
    const reply = await send({ host: HOST, path: "/cached" });
    expect(reply.status).toBe(304);
    expect(reply.headers.etag).toBe('"v1"');
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
  });

  it("an unreachable origin is 502 and frees the slot", async () => {
    await h.addPool({ subdomain: "down", origin: "http://127.0.0.1:9", maxConcurrent: 1 });
    const downKey = (await h.mintKey("down")).plaintext;
    const reply = await poolRequest(h.proxy.port, {
      host: `down.${POOL_DOMAIN}`,
      headers: { "x-svc-key": downKey },
    });
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body)).toEqual({
      error: "bad_gateway",
      message: "The origin could not be reached.",
    });
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(reply.headers["x-svc-remaining-slots"]).toBe("0");
    expect(reply.headers["x-svc-effective-limit"]).toBe("1");
    expect((await h.governor.status("down")).held).toBe(0);
  });

  it("says why a 502: an answer that is not HTTP, a status HTTP does not define, or a connection closed without one", async () => {
    const cases: [string, (socket: Socket) => void, string][] = [
      [
        "garbage",
        (socket) => socket.end("NOT HTTP\r\n\r\n"),
        "The origin's answer is not valid HTTP/1.1.",
      ],
      [
        "hangup",
        (socket) => socket.destroy(),
        "The origin closed the connection without answering.",
      ],
      [
        "mismatch",
        (socket) =>
          socket.end("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
        "The origin's answer is not valid HTTP/1.1: its Content-Length does not match its body.",
      ],
      [
        "undefined-status",
        (socket) => socket.end("HTTP/1.1 999 Weird\r\nContent-Length: 2\r\n\r\nhi"),
        "The origin answered with status 999, which HTTP does not define (100-599).",
      ],
    ];
    for (const [subdomain, answer, message] of cases) {
      const origin = createServer((socket) => socket.once("data", () => answer(socket)));
      await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = origin.address() as AddressInfo;
        await h.addPool({ subdomain, origin: `http://127.0.0.1:${port}`, maxConcurrent: 1 });
        const reply = await poolRequest(h.proxy.port, {
          host: `${subdomain}.${POOL_DOMAIN}`,
          headers: { "x-svc-key": (await h.mintKey(subdomain)).plaintext },
        });
        expect([reply.status, JSON.parse(reply.body)]).toEqual([
          502,
          { error: "bad_gateway", message },
        ]);
        expect((await h.governor.status(subdomain)).held).toBe(0);
      } finally {
        origin.close();
      }
    }
  });

  it("relays an origin's early refusal of a large upload, or says the body was cut short", async () => {
    // The origin answers 413 before reading the body and closes: the proxy's write of the rest
    // may fail before the answer is read, and then the answer is lost with the socket.
    const origin = createHttpServer((_request, response) => {
      response.writeHead(413, { connection: "close" }).end("too big");
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = origin.address() as AddressInfo;
      await h.addPool({ subdomain: "early", origin: `http://127.0.0.1:${port}`, maxConcurrent: 1 });
      const reply = await poolRequest(h.proxy.port, {
        host: `early.${POOL_DOMAIN}`,
        method: "POST",
        headers: { "x-svc-key": (await h.mintKey("early")).plaintext },
        body: Buffer.alloc(12 * 1024 * 1024, 97),
      });
      if (reply.status !== 413) {
        expect([reply.status, JSON.parse(reply.body).message]).toEqual([
          502,
          expect.stringContaining("before it took the whole request body"),
        ]);
      }
      expect((await h.governor.status("early")).held).toBe(0);
    } finally {
      origin.close();
    }
  });

  it("refuses before the origin: unknown pool and missing key 401, postgres pool 501", async () => {
    const unknown = await poolRequest(h.proxy.port, { host: `nope.${POOL_DOMAIN}` });
    expect(unknown.status).toBe(401);
    expect(unknown.headers["x-svc-rejected-by"]).toBe("sluice");
    expect((await poolRequest(h.proxy.port, { host: "elsewhere.test" })).status).toBe(404);
    expect((await poolRequest(h.proxy.port, { host: HOST })).status).toBe(401);
    await h.addPool({
      subdomain: "db",
      backend: "postgres",
      origin: upstream.url,
      maxConcurrent: 1,
    });
    const dbKey = (await h.mintKey("db")).plaintext;
    const db = await poolRequest(h.proxy.port, {
      host: `db.${POOL_DOMAIN}`,
      headers: { "x-svc-key": dbKey },
    });
    expect(db.status).toBe(501);
    expect(JSON.parse(db.body)).toMatchObject({ error: "not_implemented" });
    expect(db.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(upstream.hits).toBe(0);
  });

  it("queues with X-Svc-Queue-Timeout-Ms and is served when a slot frees", async () => {
    await h.addPool({ subdomain: "queue", origin: upstream.url, maxConcurrent: 1, queueSize: 1 });
    const queueKey = (await h.mintKey("queue")).plaintext;
    const held = await h.governor.acquire("queue");
    const pending = poolRequest(h.proxy.port, {
      host: `queue.${POOL_DOMAIN}`,
      headers: { "x-svc-key": queueKey, "x-svc-queue-timeout-ms": "5000" },
    });
    await waitFor(async () => (await h.governor.status("queue")).queued === 1);
    await (h.manualClock as ManualClock).advance(250);
    await h.governor.release("queue", held.slotId);
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.headers["x-svc-queued-ms"]).toBe("250");
    expect((await h.accessLog.list("queue"))[0]).toMatchObject({
      outcome: "queued",
      queuedMs: 250,
    });
  });

  it("waits in the pool's queue by default, up to the pool's queue timeout", async () => {
    await h.addPool({
      subdomain: "queue",
      origin: upstream.url,
      maxConcurrent: 1,
      queueSize: 1,
      queueTimeoutMs: 2_000,
    });
    const queueKey = (await h.mintKey("queue")).plaintext;
    const held = await h.governor.acquire("queue");
    // A stock client sends no Sluice header at all.
    const request = (path: string) =>
      poolRequest(h.proxy.port, {
        host: `queue.${POOL_DOMAIN}`,
        path,
        headers: { "x-svc-key": queueKey },
      });
    const served = request("/served");
    await waitFor(async () => (await h.governor.status("queue")).queued === 1);
    await h.governor.release("queue", held.slotId);
    expect((await served).status).toBe(200);

    const second = await h.governor.acquire("queue");
    const timedOut = request("/timed-out");
    await waitFor(async () => (await h.governor.status("queue")).queued === 1);
    await (h.manualClock as ManualClock).advance(2_000);
    const reply = await timedOut;
    expect([reply.status, JSON.parse(reply.body).error]).toEqual([504, "queue_timeout"]);
    await h.governor.release("queue", second.slotId);
    expect(upstream.hits).toBe(1);
  });
});
