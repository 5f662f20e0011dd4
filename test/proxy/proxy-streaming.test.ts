import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHarness, type Harness, POOL_DOMAIN, waitFor } from "../lock-api/harness.js";
import { openPoolRequest, poolRequest, startPoolRequest } from "./client.js";
import { deferred, TestUpstream } from "./upstream.js";

const HOST = `llm.${POOL_DOMAIN}`;

describe("pool proxy streaming", () => {
  let h: Harness;
  let upstream: TestUpstream;
  let key: string;

  beforeEach(async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({ subdomain: "llm", origin: upstream.url, maxConcurrent: 1 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  it("passes server-sent events through unbuffered: the first event arrives before the last is sent", async () => {
    const sendLast = deferred();
    let lastSent = false;
    upstream.on("/sse", async (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.write("data: first\n\n");
      await sendLast.promise;
      lastSent = true;
      response.end("data: last\n\n");
    });
    const { response } = await openPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/sse",
      headers: { "x-svc-key": key, accept: "text/event-stream" },
    });
    expect(response.headers["content-type"]).toBe("text/event-stream");
    expect(response.headers["x-svc-effective-limit"]).toBe("1");
    const chunks: string[] = [];
    for await (const chunk of response) {
      chunks.push(String(chunk));
      if (chunks.length === 1) {
        expect(String(chunk)).toBe("data: first\n\n");
        expect(lastSent).toBe(false);
        // The slot is held while the stream is open.
        expect((await h.governor.status("llm")).held).toBe(1);
        sendLast.resolve();
      }
    }
    expect(chunks.join("")).toBe("data: first\n\ndata: last\n\n");
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
  });

  it("a client that goes away mid-stream frees its slot, and the next request gets it", async () => {
    upstream.on("/endless", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: tick\n\n");
      // Never ends: only the client leaving can free the slot.
    });
    const { request, response } = await openPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/endless",
      headers: { "x-svc-key": key },
    });
    await new Promise((resolve) => response.once("data", resolve));
    expect((await h.governor.status("llm")).held).toBe(1);
    request.destroy();
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    await waitFor(() => upstream.inFlight === 0);
    const next = await poolRequest(h.proxy.port, {
      host: HOST,
      path: "/echo",
      headers: { "x-svc-key": key },
    });
    expect(next.status).toBe(200);
  });

  it("a client that goes away before the origin answers frees its slot too", async () => {
    upstream.on("/late", () => {});
    const { request } = startPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/late",
      headers: { "x-svc-key": key },
    });
    await waitFor(() => upstream.hits === 1);
    expect((await h.governor.status("llm")).held).toBe(1);
    request.destroy();
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    await waitFor(() => upstream.inFlight === 0);
  });

  it("a queued client that goes away leaves the queue and never takes a slot", async () => {
    upstream.on("/endless", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: tick\n\n");
    });
    const holder = await openPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/endless",
      headers: { "x-svc-key": key },
    });
    const queued = startPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/echo",
      headers: { "x-svc-key": key, "x-svc-queue-timeout-ms": "30000" },
    });
    await waitFor(async () => (await h.governor.status("llm")).queued === 1);
    queued.request.destroy();
    await waitFor(async () => (await h.governor.status("llm")).queued === 0);
    holder.request.destroy();
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    // The slot freed went to nobody: the gone client was not served in the meantime.
    expect(upstream.hits).toBe(1);
    const next = await poolRequest(h.proxy.port, {
      host: HOST,
      path: "/echo",
      headers: { "x-svc-key": key },
    });
    expect(next.status).toBe(200);
    expect((await h.governor.status("llm")).held).toBe(0);
  });

  it("a slow reader pauses the origin instead of buffering its whole body", async () => {
    const chunk = "x".repeat(64 * 1024);
    let written = 0;
    let originBlocked = false;
    const origin = deferred();
    upstream.on("/big", (_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      const pump = () => {
        while (written < 1024) {
          written++;
          if (!response.write(chunk)) {
            originBlocked = true;
            origin.resolve();
            response.once("drain", pump);
            return;
          }
        }
        response.end();
      };
      pump();
    });
    const { response } = await openPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/big",
      headers: { "x-svc-key": key },
    });
    response.pause();
    await origin.promise;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // 64 MiB in all; with nobody reading, only socket buffers' worth (about 8 MiB here) left
    // the origin.
    expect(originBlocked).toBe(true);
    expect(written).toBeLessThan(512);
    let received = 0;
    response.on("data", (data: Buffer) => {
      received += data.length;
    });
    response.resume();
    await new Promise((resolve) => response.once("end", resolve));
    expect(received).toBe(1024 * chunk.length);
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
  });

  it("a request in flight when its pool is deleted is answered 404 at once, and the origin call cut", async () => {
    upstream.on("/late", () => {});
    const { response } = startPoolRequest(h.proxy.port, {
      host: HOST,
      path: "/late",
      headers: { "x-svc-key": key },
    });
    await waitFor(() => upstream.hits === 1);
    await h.governor.removePool("llm");
    const answer = await response;
    expect(answer.statusCode).toBe(404);
    let body = "";
    for await (const chunk of answer) body += String(chunk);
    expect(JSON.parse(body)).toMatchObject({ error: "not_found", message: /deleted/ });
    await waitFor(() => upstream.inFlight === 0);
  });

  it("streams request bodies to the origin as they arrive (chunked upload)", async () => {
    const firstPart = deferred<string>();
    upstream.onStream("/upload", async (request, response) => {
      let body = "";
      for await (const chunk of request) {
        body += String(chunk);
        firstPart.resolve(body);
      }
      response.end(body);
    });
    const { request, response } = startPoolRequest(h.proxy.port, {
      host: HOST,
      method: "POST",
      path: "/upload",
      headers: { "x-svc-key": key, "transfer-encoding": "chunked" },
      end: false,
    });
    request.write("part one, ");
    // The origin sees the first part while the caller has not finished sending.
    expect(await firstPart.promise).toBe("part one, ");
    request.end("part two");
    const reply = await response;
    let echoed = "";
    for await (const chunk of reply) echoed += String(chunk);
    expect(echoed).toBe("part one, part two");
  });
});
