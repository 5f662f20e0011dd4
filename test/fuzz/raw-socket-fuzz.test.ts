import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { faultLines, fuzzOptions } from "./contract.js";
import { type FuzzServer, HANG_MS, startFuzzServer } from "./harness.js";

let env: FuzzServer;
beforeAll(async () => {
  env = await startFuzzServer();
});
afterAll(() => env?.close());

/** Writes raw bytes and reads until the server closes (or HANG_MS passes). */
function exchange(port: number, bytes: Buffer): Promise<{ text: string; hung: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString("latin1"), hung: true });
    }, HANG_MS);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString("latin1"), hung: false });
    });
    socket.on("error", () => {});
    socket.end(bytes);
  });
}

/** Bytes node's HTTP client never sends: control characters, raw UTF-8, NUL, DEL, bare CR. */
const rawByte = fc.oneof(
  fc.integer({ min: 0, max: 31 }),
  fc.constantFrom(0x7f, 0x80, 0xc3, 0xa9, 0xff, 0x20, 0x09, 0x25),
  fc.integer({ min: 0x21, max: 0x7e }),
);
const rawPath = fc
  .tuple(
    fc.constantFrom(
      "/api/v1/pools/",
      "/pools/chat/lock/",
      "/oauth/",
      "/mcp",
      "/",
      "/pool/",
      "*",
      "http://chat.pools.localhost/",
      "",
    ),
    fc.oneof(
      { weight: 2, arbitrary: fc.array(fc.integer({ min: 0x21, max: 0x7e }), { maxLength: 12 }) },
      { weight: 1, arbitrary: fc.array(rawByte, { maxLength: 12 }) },
    ),
  )
  .map(([prefix, bytes]) => Buffer.concat([Buffer.from(prefix, "latin1"), Buffer.from(bytes)]));

const rawHead = fc.record({
  method: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("GET", "POST", "HEAD", "DELETE") },
    { weight: 1, arbitrary: fc.constantFrom("get", "G\u0000T", "PRI", "CONNECT", "") },
  ),
  path: rawPath,
  version: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("HTTP/1.1", "HTTP/1.0") },
    { weight: 1, arbitrary: fc.constantFrom("HTTP/2.0", "HTTP/1.1 x", "", "http/1.1") },
  ),
  host: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("127.0.0.1", "chat.pools.localhost") },
    { weight: 1, arbitrary: fc.constantFrom("", "a\u0000b", "x".repeat(300), null) },
  ),
  extra: fc.array(
    fc.constantFrom(
      "Content-Length: 5",
      "Content-Length: -1",
      "Content-Length: 1e309",
      "Content-Length: 2\r\nContent-Length: 3",
      "Transfer-Encoding: chunked",
      "Transfer-Encoding: chunked, identity",
      "Transfer-Encoding: chunked\r\nContent-Length: 3",
      " folded: continuation",
      "X-Bad\u0001: v",
      "X-Nul: a\u0000b",
      "Authorization: Bearer \u00e9",
      "Expect: 100-continue",
      "Connection: upgrade\r\nUpgrade: websocket",
    ),
    { maxLength: 3 },
  ),
  body: fc.constantFrom(
    "",
    "hello",
    "0\r\n\r\n",
    "zz\r\nhello\r\n0\r\n\r\n",
    "{}",
    "5\r\nhello\r\n",
  ),
});

describe("raw bytes on the socket (property)", () => {
  it("answers with an HTTP status below 500 and closes or keeps going, never hangs or crashes", async () => {
    const statuses = new Set<string>();
    await fc.assert(
      fc.asyncProperty(rawHead, async (head) => {
        const lines = [`${head.method} `, head.path.toString("latin1"), ` ${head.version}\r\n`];
        if (head.host !== null) lines.push(`Host: ${head.host}\r\n`);
        for (const header of head.extra) lines.push(`${header}\r\n`);
        // Always end the exchange: the server's own timeouts are not what this tests.
        lines.push("Connection: close\r\n\r\n", head.body);
        const bytes = Buffer.from(lines.join(""), "latin1");
        const { text, hung } = await exchange(env.port, bytes);
        const what = `${JSON.stringify(bytes.toString("latin1")).slice(0, 400)} → ${JSON.stringify(text.slice(0, 300))}`;
        // A request still waiting for its announced body is the client's doing, not a hang.
        if (hung && /Content-Length: [1-9]|chunked|Expect/.test(lines.join(""))) return;
        expect(hung, what).toBe(false);
        statuses.add(text.slice(9, 12));
        if (text === "") return; // Node drops some sockets (e.g. a bare `PRI`) without a word.
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]);
        expect(status, what).toBeGreaterThanOrEqual(100);
        expect(status, what).toBeLessThan(500);
      }),
      fuzzOptions(300, 20261127),
    );
    // Not everything was a 400 from the parser: some requests reached the apps.
    expect(statuses.size).toBeGreaterThan(3);
    // Still serving.
    const { text } = await exchange(
      env.port,
      Buffer.from("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
    );
    expect(text).toMatch(/^HTTP\/1\.1 [23]\d\d /);
  });

  it("logged no fault while answering all of it", () => {
    expect(faultLines(env.logs)).toEqual([]);
  });
});
