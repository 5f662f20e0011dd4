import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A real TCP proxy in front of the test Redis, so a test can cut the network (`stop`: every
 * connection drops and new ones are refused), stall it (`stall`: connections stay open but
 * nothing is forwarded, like a paused or unreachable host) and bring it back on the same port,
 * without touching the Redis server other test files share.
 *
 * @example
 * ```ts
 * const proxy = await TcpProxy.start(6379);
 * const store = createRedisSlotStore({ url: proxy.url });
 * await proxy.stop(); // outage
 * await proxy.resume(); // back
 * ```
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  /** Commands still reach Redis, which runs them, but no answer comes back. */
  private answersLost = false;
  port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(target: URL): Promise<TcpProxy> {
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.listen(0);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Outage: drops every connection and refuses new ones. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stall: connections stay up, bytes stop flowing (commands time out). */
  stall(): void {
    this.stalled = true;
  }

  /**
   * Redis runs every command but its answers are lost (a stalled server that catches up after
   * the client gave up): commands time out although they took effect.
   */
  loseAnswers(): void {
    this.answersLost = true;
  }

  /** Back to normal on the same port; a stall ends by dropping the stalled connections. */
  async resume(): Promise<void> {
    if (this.stalled || this.answersLost) {
      this.stalled = false;
      this.answersLost = false;
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
    }
    if (!this.server) await this.listen(this.port);
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((client) => this.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    this.port = typeof address === "object" && address ? address.port : port;
    this.server = server;
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const forward = (from: Socket, to: Socket, lost: () => boolean) =>
      from.on("data", (chunk) => {
        if (!this.stalled && !lost()) to.write(chunk);
      });
    forward(client, upstream, () => false);
    forward(upstream, client, () => this.answersLost);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  }
}

/** A local port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
