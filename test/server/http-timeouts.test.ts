import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { tempDir } from "../cli/cli-process.js";
import { rawExchange } from "./http-client.js";

/**
 * Issue 23, item 6, on a real server: a client that stalls mid-head or idles on a keep-alive
 * connection is let go after the configured timeouts (not Node's 60-90 s), and a request with
 * two Host headers is a 400 in the error shape.
 */
describe("server connection timeouts and Host lines", () => {
  let dir: string;
  let cleanup: () => void;
  let server: SluiceServer | undefined;

  beforeEach(() => {
    ({ dir, cleanup } = tempDir("sluice-timeouts-"));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    cleanup();
  });

  async function start(flags: Record<string, string> = {}): Promise<number> {
    server = await createSluiceServer(
      loadServerConfig({ flags: { port: "0", dataDir: dir, ...flags } }),
    );
    return (await server.listen()).port;
  }

  /**
   * Writes `text`; resolves with what the server sent, how long after writing it closed the
   * connection, and how long after its first answer byte.
   */
  function exchange(port: number, text: string) {
    const socket = connect(port, "127.0.0.1");
    const startedAt = performance.now();
    let answeredAt = Number.NaN;
    socket.write(text);
    return new Promise<{ answer: string; closedAfterMs: number; idleMs: number }>(
      (resolve, reject) => {
        let answer = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
          if (answer === "") answeredAt = performance.now();
          answer += chunk;
        });
        socket.on("close", () => {
          const closedAt = performance.now();
          resolve({ answer, closedAfterMs: closedAt - startedAt, idleMs: closedAt - answeredAt });
        });
        socket.on("error", reject);
      },
    );
  }

  it("answers a head that stops arriving with 408 in the error shape after --headers-timeout-ms", async () => {
    const port = await start({ headersTimeoutMs: "300" });
    const { answer, closedAfterMs } = await exchange(
      port,
      `GET /api/v1/me HTTP/1.1\r\nHost: localhost:${port}\r\nX-Partial: `,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
      error: "request_timeout",
    });
    // The timeout plus at most one check interval (a second), far from Node's 60 s + 30 s.
    expect(closedAfterMs).toBeGreaterThanOrEqual(250);
    expect(closedAfterMs).toBeLessThan(2_500);
  });

  it("closes an idle keep-alive connection after --keep-alive-timeout-ms", async () => {
    const port = await start({ keepAliveTimeoutMs: "300" });
    const { answer, idleMs } = await exchange(
      port,
      `GET /api/v1/me HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    // Node waits a second past the timeout it advertises; its own default is 5 s.
    expect(idleMs).toBeGreaterThanOrEqual(250);
    expect(idleMs).toBeLessThan(2_500);
  });

  it("answers two Host headers with 400 invalid_request, not a 404 for the joined name", async () => {
    const port = await start();
    for (const hosts of [
      [`localhost:${port}`, `localhost:${port}`],
      [`localhost:${port}`, "chat.pools.localhost"],
    ]) {
      const answer = await rawExchange(
        port,
        `GET /api/v1/me HTTP/1.1\r\nHost: ${hosts[0]}\r\nHost: ${hosts[1]}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
        error: "invalid_request",
        message: expect.stringContaining("2 Host headers"),
      });
    }
    // An absolute-form target names the host itself; a second Host line is still refused.
    const absolute = await rawExchange(
      port,
      `GET http://localhost:${port}/api/v1/me HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\nConnection: close\r\n\r\n`,
    );
    expect(absolute).toMatch(/^HTTP\/1\.1 400 /);
  });
});
