import {
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
} from "node:http";

/** One request to a pool host through the proxy listening on 127.0.0.1:`port`. */
export interface PoolRequest {
  /** Host header, e.g. "llm.pools.test". */
  host: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface PoolReply {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/**
 * Starts a request; `end: false` leaves the body open for the caller to write. Node's client
 * is used because `fetch` cannot set the Host header.
 */
export function startPoolRequest(
  port: number,
  options: PoolRequest & { end?: boolean },
): { request: ClientRequest; response: Promise<IncomingMessage> } {
  const outgoing = request({
    host: "127.0.0.1",
    port,
    method: options.method ?? "GET",
    path: options.path ?? "/",
    headers: { host: options.host, ...options.headers },
    agent: false,
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    outgoing.once("response", resolve);
    outgoing.once("error", reject);
  });
  // A test that destroys the request on purpose handles (or ignores) the rejection itself.
  response.catch(() => {});
  if (options.end !== false) outgoing.end(options.body);
  return { request: outgoing, response };
}

/** Starts a request and resolves with the response head; the body is left to the caller. */
export async function openPoolRequest(
  port: number,
  options: PoolRequest,
): Promise<{ request: ClientRequest; response: IncomingMessage }> {
  const started = startPoolRequest(port, options);
  return { request: started.request, response: await started.response };
}

/** Sends a request and reads the whole response. */
export async function poolRequest(port: number, options: PoolRequest): Promise<PoolReply> {
  const { response } = await openPoolRequest(port, options);
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    rawHeaders: response.rawHeaders,
    body: Buffer.concat(chunks).toString(),
  };
}
