import { request } from "node:http";
import { connect } from "node:net";

/** A response read to the end. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json<T = unknown>(): T;
}

/**
 * A plain HTTP request to 127.0.0.1 with any Host header (fetch does not let tests set it).
 *
 * @example
 * ```ts
 * const answer = await httpRequest({ port, path: "/x", host: "chat.pools.localhost" });
 * ```
 */
export function httpRequest(options: {
  port: number;
  path: string;
  host: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port: options.port,
        path: options.path,
        method: options.method ?? "GET",
        headers: { ...options.headers, host: options.host },
        agent: false,
      },
      (incoming) => {
        let body = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk: string) => {
          body += chunk;
        });
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body,
            json: <T>() => JSON.parse(body) as T,
          }),
        );
        incoming.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

/**
 * Sends `request` as raw bytes (for what `http.request` will not send, such as an
 * absolute-form target) and answers everything the server sent until it closed.
 *
 * @example
 * ```ts
 * await rawExchange(port, "OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
 * ```
 */
export function rawExchange(port: number, rawRequest: string): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  socket.write(rawRequest);
  return new Promise<string>((resolve, reject) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}
