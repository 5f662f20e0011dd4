import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the checker saw of one pool's origin. */
export interface OriginTally {
  /** Requests answered in full. */
  served: number;
  inFlight: number;
  /** The most requests this origin ever had in flight at once. */
  maxInFlight: number;
}

/**
 * The upstream of an end-to-end run: one real HTTP origin per pool, all counted together so
 * the checker sees both each pool's concurrency and the budget's total (what the origin
 * machine behind a budget would feel). Each request is held `holdMs` before it is answered.
 */
export class ConcurrencyChecker {
  readonly pools = new Map<string, OriginTally & { port: number; server: Server }>();
  totalInFlight = 0;
  /** The most requests in flight at once over every pool's origin. */
  maxTotalInFlight = 0;

  constructor(private readonly holdMs: number) {}

  /** Starts an origin for `pool` and returns its URL. */
  async addOrigin(pool: string): Promise<string> {
    const server = createServer((request, response) => {
      tally.inFlight++;
      tally.maxInFlight = Math.max(tally.maxInFlight, tally.inFlight);
      this.totalInFlight++;
      this.maxTotalInFlight = Math.max(this.maxTotalInFlight, this.totalInFlight);
      let counted = true;
      // Counted down before the answer leaves (and when a caller's process dies mid-call):
      // the next holder may call as soon as the answer lands.
      const done = () => {
        if (!counted) return;
        counted = false;
        tally.inFlight--;
        this.totalInFlight--;
      };
      response.once("close", done);
      request.resume();
      setTimeout(() => {
        done();
        tally.served++;
        response.writeHead(200, { "content-type": "text/plain", "x-origin-pool": pool });
        response.end("ok");
      }, this.holdMs);
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const tally = { served: 0, inFlight: 0, maxInFlight: 0, port, server };
    this.pools.set(pool, tally);
    return `http://127.0.0.1:${port}`;
  }

  /** The origin port of `pool` (Lock API callers call it directly). */
  portOf(pool: string): number {
    const tally = this.pools.get(pool);
    if (!tally) throw new Error(`No origin for pool ${pool}`);
    return tally.port;
  }

  /** Starts counting the peaks anew from what is in flight now (to see one phase of a run). */
  restartPeaks(): void {
    for (const tally of this.pools.values()) tally.maxInFlight = tally.inFlight;
    this.maxTotalInFlight = this.totalInFlight;
  }

  tally(pool: string): OriginTally {
    const { served, inFlight, maxInFlight } = this.pools.get(pool)!;
    return { served, inFlight, maxInFlight };
  }

  async stop(): Promise<void> {
    for (const { server } of this.pools.values()) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}
