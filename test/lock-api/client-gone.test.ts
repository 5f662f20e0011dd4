import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClientGoneError,
  clientGoneSignal,
  onClientGone,
} from "../../adapters/hono/lock/node-bindings.js";
import { SluiceError } from "../../src/errors.js";

/** What the two watchers heard for one request, once its response has closed. */
interface Heard {
  signalReason: unknown;
  callbackReason: unknown;
}

let server: Server | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

/** A Node server whose handler watches its client with both forms; `answer` ends the response. */
function watchOneRequest(answer: boolean): Promise<{ port: number; heard: Promise<Heard> }> {
  return new Promise((ready) => {
    let report: (heard: Heard) => void = () => {};
    const heard = new Promise<Heard>((resolve) => {
      report = resolve;
    });
    server = createServer((incoming, outgoing) => {
      const env = { incoming, outgoing };
      const unused = new Request("http://unused.test/");
      const signal = clientGoneSignal(env, unused);
      let callbackReason: unknown;
      onClientGone(env, unused, (reason) => {
        callbackReason = reason;
      });
      let signalReason: unknown;
      signal.addEventListener("abort", () => {
        signalReason = signal.reason;
      });
      outgoing.once("close", () => setImmediate(() => report({ signalReason, callbackReason })));
      if (answer) outgoing.end("done");
    });
    server.listen(0, "127.0.0.1", () =>
      ready({ port: (server!.address() as AddressInfo).port, heard }),
    );
  });
}

describe("watching a Node client", () => {
  it("reports a client that leaves mid-request with a typed ClientGoneError (code aborted)", async () => {
    const { port, heard } = await watchOneRequest(false);
    const outgoing = httpRequest({ port, host: "127.0.0.1", path: "/" });
    outgoing.on("error", () => {});
    outgoing.end();
    // Gone once the server has the request (and is holding its response open).
    setTimeout(() => outgoing.destroy(), 50);
    const { signalReason, callbackReason } = await heard;
    for (const reason of [signalReason, callbackReason]) {
      expect(reason).toBeInstanceOf(ClientGoneError);
      expect(reason).toBeInstanceOf(SluiceError);
      expect((reason as SluiceError).code).toBe("aborted");
    }
  });

  it("stays quiet for a client whose response was sent in full", async () => {
    const { port, heard } = await watchOneRequest(true);
    const body = await fetch(`http://127.0.0.1:${port}/`).then((response) => response.text());
    expect(body).toBe("done");
    expect(await heard).toEqual({ signalReason: undefined, callbackReason: undefined });
  });
});
