import { Agent, request } from "node:http";

/** One Sluice server as the load's clients see it: a port, a connection pool, a liveness flag. */
export class Endpoint {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 1_024 });
  /** Set once the test killed the process behind it: clients then go elsewhere. */
  dead = false;
  constructor(
    readonly name: string,
    readonly port: number,
  ) {}

  close(): void {
    this.agent.destroy();
  }
}

/** A response read to the end. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A failure to get any HTTP answer (connection refused or reset, timeout). */
export class NoAnswerError extends Error {
  constructor(
    readonly endpoint: string,
    cause: unknown,
  ) {
    super(`${endpoint}: no answer (${(cause as Error).message ?? String(cause)})`, { cause });
  }
}

/**
 * One HTTP request to 127.0.0.1 through `endpoint`'s keep-alive pool, with any Host header;
 * a body is sent as JSON unless `headers` give another `content-type`. Rejects with {@link NoAnswerError} when no answer arrives within `timeoutMs`.
 */
export function send(
  endpoint: { name: string; port: number; agent?: Agent },
  options: {
    method?: string;
    path: string;
    host?: string;
    headers?: Record<string, string>;
    body?: string;
    timeoutMs?: number;
  },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.host) headers.host = options.host;
    if (options.body !== undefined) headers["content-type"] ??= "application/json";
    const outgoing = request(
      {
        host: "127.0.0.1",
        port: endpoint.port,
        path: options.path,
        method: options.method ?? "POST",
        headers,
        agent: endpoint.agent ?? false,
        timeout: options.timeoutMs ?? 20_000,
      },
      (incoming) => {
        let body = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk: string) => {
          body += chunk;
        });
        incoming.once("end", () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body }),
        );
        incoming.once("error", (error) => reject(new NoAnswerError(endpoint.name, error)));
      },
    );
    outgoing.once("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.once("error", (error) => reject(new NoAnswerError(endpoint.name, error)));
    outgoing.end(options.body);
  });
}
