import pg from "pg";
import { POSTGRES_TYPES, type Queryable } from "./connect.js";

/** Options of {@link PostgresChangeWatch}. */
export interface PostgresChangeWatchOptions {
  url: string;
  /** Reads the version on its own this often (ms), in case a notification was lost; default 1 000. */
  pollMs?: number;
  log?: (line: string) => void;
}

const CHANNEL = "sluice_catalog";

/**
 * The catalog's version as this process last saw it: every catalog write bumps
 * `catalog_version` and NOTIFYs at commit (a trigger), which a LISTEN connection picks up at
 * once; a periodic read covers notifications lost while that connection was down. Reading
 * {@link PostgresChangeWatch.version} costs no I/O, so the request path may ask often.
 *
 * @example
 * ```ts
 * const watch = new PostgresChangeWatch(pool, { url });
 * await watch.start();
 * watch.version; // 42
 * ```
 */
export class PostgresChangeWatch {
  private seen = 0;
  private listener: pg.Client | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The listening connection is down: its loss was logged, the attempts since are not. */
  private down = false;
  private readonly listeners = new Set<() => void>();
  private readonly pollMs: number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly pool: Queryable,
    private readonly options: PostgresChangeWatchOptions,
  ) {
    this.pollMs = options.pollMs ?? 1_000;
    this.log = options.log ?? (() => {});
  }

  /** The highest catalog version seen; moves whenever any server changes the catalog. */
  get version(): number {
    return this.seen;
  }

  /**
   * Calls `listener` whenever the version moves (a NOTIFY, a periodic read, or this process's
   * own write); returns how to stop.
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the version now (after this process's own write, so its marker moves at once). */
  async refresh(): Promise<number> {
    const result = await this.pool.query<{ version: number }>(
      "SELECT version FROM catalog_version WHERE id = 1",
    );
    this.note(result.rows[0]?.version ?? 0);
    return this.seen;
  }

  async start(): Promise<void> {
    await this.refresh();
    await this.listen();
    const poll = () => {
      this.refresh()
        .catch(() => {})
        .finally(() => {
          if (!this.stopped) this.pollTimer = setTimeout(poll, this.pollMs).unref();
        });
    };
    this.pollTimer = setTimeout(poll, this.pollMs).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
  }

  private note(version: number): void {
    if (version <= this.seen) return;
    this.seen = version;
    for (const listener of this.listeners) listener();
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, types: POSTGRES_TYPES });
    const retry = (reason: string) => {
      if (this.stopped || this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => {});
      // Once per outage: a database down for ten minutes would otherwise log 600 lines.
      if (!this.down) {
        this.down = true;
        this.log(
          `Catalog change notifications lost (${reason}); reconnecting every second ` +
            "(changes are still read every second)",
        );
      }
      this.reconnectTimer = setTimeout(() => {
        this.listen()
          .then(() => {
            if (this.down && !this.stopped) {
              this.down = false;
              this.log("Catalog change notifications are back");
            }
            return this.refresh();
          })
          .catch((error: Error) => retry(error.message));
      }, 1_000).unref();
    };
    client.on("error", (error) => retry(error.message));
    client.on("end", () => retry("connection closed"));
    client.on("notification", (message) => {
      if (message.channel === CHANNEL) this.note(Number(message.payload));
    });
    this.listener = client;
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
  }
}
