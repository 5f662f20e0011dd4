import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

/** What the upstream saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

type Handler = (
  request: IncomingMessage,
  response: ServerResponse,
  body: Buffer,
) => void | Promise<void>;

/**
 * A local origin the tests control: records every request, counts requests in flight (and
 * the most seen at once), and answers by path with handlers a test can replace.
 */
export class TestUpstream {
  readonly seen: SeenRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly handlers = new Map<string, Handler>();
  private readonly streamHandlers = new Map<
    string,
    (request: IncomingMessage, response: ServerResponse) => void | Promise<void>
  >();
  private server: Server | null = null;
  port = 0;

  /** Answers requests whose path (without query) is `path`. */
  on(path: string, handler: Handler): this {
    this.handlers.set(path, handler);
    return this;
  }

  /** Answers `path` with the request body unread, for tests that watch it arrive. */
  onStream(
    path: string,
    handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>,
  ): this {
    this.streamHandlers.set(path, handler);
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get hits(): number {
    return this.seen.length;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      // Connections cut by the tests surface here as "aborted"; they are expected.
      this.handle(request, response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    response.once("close", () => this.inFlight--);
    const path = (request.url ?? "/").split("?")[0] as string;
    const streamHandler = this.streamHandlers.get(path);
    if (streamHandler) {
      this.seen.push(seenRequest(request, Buffer.alloc(0)));
      await streamHandler(request, response);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    this.seen.push(seenRequest(request, body));
    const handler = this.handlers.get(path) ?? echo;
    await handler(request, response, body);
  }
}

function seenRequest(request: IncomingMessage, body: Buffer): SeenRequest {
  return {
    method: request.method ?? "",
    url: request.url ?? "",
    headers: request.headers,
    rawHeaders: request.rawHeaders,
    body,
  };
}

/** Answers with what it received, as JSON. */
export const echo: Handler = (request, response, body) => {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(
    JSON.stringify({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: body.toString(),
    }),
  );
};

/** A promise with its resolve function, for steering handlers from a test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
