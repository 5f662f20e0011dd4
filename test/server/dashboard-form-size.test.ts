import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_FORM_BYTES } from "../../adapters/dashboard/create-dashboard-app.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";

/** Posts a sign-in form of `size` bytes, with or without a Content-Length. */
function postSignIn(
  port: number,
  size: number,
  chunked: boolean,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const origin = `http://localhost:${port}`;
    const head = "email=ada%40acme.test&password=";
    const headers: Record<string, string> = {
      host: `localhost:${port}`,
      origin,
      "content-type": "application/x-www-form-urlencoded",
    };
    if (!chunked) headers["content-length"] = String(head.length + size);
    const sent = request(
      { port, method: "POST", path: "/sign-in", headers, agent: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    let answered = false;
    sent.on("response", () => {
      answered = true;
    });
    // The server answers before the whole upload is out and may close the connection then
    // (a connection of its own: a kept-alive one would carry the cut upload into the next).
    sent.on("error", (error) => setTimeout(() => (answered ? undefined : reject(error)), 500));
    sent.write(head);
    const piece = Buffer.alloc(64 * 1024, "a");
    let left = size;
    const pump = () => {
      while (left > 0 && !sent.destroyed) {
        const part = piece.subarray(0, Math.min(piece.length, left));
        left -= part.length;
        if (!sent.write(part)) return void sent.once("drain", pump);
      }
      sent.end();
    };
    pump();
  });
}

/** A dashboard form is read whole into memory: its size is bounded, also signed out. */
describe("dashboard form size in a running server", () => {
  let dir: string;
  let server: SluiceServer;
  let port: number;
  const logLines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-form-size-"));
    const config = loadServerConfig({
      flags: { port: "0", dataDir: dir },
      env: { SLUICE_LOG_REQUESTS: "1" },
    });
    server = await createSluiceServer(config, {
      ...DEFAULT_SERVER_APPS,
      log: (line) => logLines.push(line),
    });
    ({ port } = await server.listen());
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a form over 1 MiB with 413, declared or streamed, before reading it", async () => {
    // Declared too large: answered at once, before a byte of the body is read.
    const declared = await postSignIn(port, MAX_FORM_BYTES + 1, false);
    expect(declared.status).toBe(413);
    expect(declared.text).toContain(`The request body exceeds ${MAX_FORM_BYTES} bytes.`);
    // Streamed: refused once 1 MiB has arrived. The server closes the connection with its
    // answer to stop the upload, so the client may see the close instead: the log tells.
    const streamed = await postSignIn(port, 4 * MAX_FORM_BYTES, true).catch(() => null);
    if (streamed) expect(streamed.status).toBe(413);
    const refused = () => logLines.filter((line) => /path=\/sign-in status=413/.test(line));
    await expect.poll(() => refused().length).toBe(2);
    // An ordinary form is read as before: a wrong password, not a refusal of its size.
    const ordinary = await postSignIn(port, 20, false);
    expect(ordinary.status).toBe(401);
  });
});
