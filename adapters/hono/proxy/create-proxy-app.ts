import { Hono } from "hono";
import { keyAllowsMethod } from "../../../src/catalog/key-access.js";
import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import { ForbiddenError } from "../../../src/errors.js";
import { signRequest } from "../../../src/signing/sign-request.js";
import { admitCaller } from "../caller/admit-caller.js";
import {
  callerPolicyChecks,
  enforceCallerPolicies,
  loggedAddress,
} from "../caller/caller-policies.js";
import { remoteAddressOf, sentTarget } from "../caller/remote-address.js";
import { continueIfExpected } from "../lock/expect-continue.js";
import { REJECTED_BY_HEADER, respondToError, sluiceReply } from "../lock/lock-responses.js";
import { nodeBindings, onClientGone } from "../lock/node-bindings.js";
import { CatalogPoolDirectory } from "../lock/pool-directory.js";
import { readBodyLimited } from "../lock/request-body.js";
import { type HeaderLookup, requestHeaders } from "../lock/request-headers.js";
import { waitRequest } from "../lock/wait-options.js";
import { createSqlHandler } from "../sql/serve-sql.js";
import { forwardInSlot } from "./forward.js";
import { applyForwardsLeft, FORWARDED_METHODS, methodRule } from "./max-forwards.js";
import { overriddenMethods } from "./method-override.js";
import { type ProxyAppDeps, SIGNED_BODY_LIMIT_BYTES } from "./proxy-deps.js";
import { upstreamRequestHeaders } from "./request-headers.js";
import { admitToSlot } from "./slot-admission.js";
import { createUpstreamClient, type UpstreamBody } from "./upstream-call.js";
import {
  parseOrigin,
  poolSubdomainOf,
  type RequestTarget,
  refuseAmbiguousPath,
  requestTarget,
} from "./upstream-target.js";

/** The proxy app; `close()` drops its idle origin connections. */
export type ProxyApp = Hono & { close(): void };

/**
 * The pool proxy (backend `http`) as a Hono app, for hosts `{subdomain}.{poolDomain}`:
 * each request goes to the pool's origin (origin URL + path + query) through the pool's
 * slots, queue and RPM gate, shared with Lock API traffic. In order:
 * 1. pool and caller checks (`adapters/hono/caller/`: 401 for a missing key, a key not valid
 *    for the pool and a pool that does not exist alike; then the pool's caller policies, 401
 *    or 403); a postgres pool is served by the SQL handler (`adapters/hono/sql/`, POST /sql in the Neon HTTP format), or answers 501 without one;
 *    an ambiguous path (dot segments in any spelling, encoded slashes or backslashes) answers 400;
 * 2. key rules (contract 4.1 rule 2): a read-only key on a non-read method, itself or named
 *    by a method-override header, gets 403 before a slot is taken or the origin sees
 *    anything; TRACE (also through an override) gets 405, and an OPTIONS with
 *    `Max-Forwards: 0` is answered by Sluice;
 * 3. a slot (`X-Svc-Queue-Timeout-Ms`, `X-Svc-No-Queue`); Sluice's own refusals carry
 *    `x-svc-rejected-by: sluice`, so a 429 from the origin (passed through) is distinguishable;
 * 4. the origin request: managed credential injected, the caller's pool key and `X-Svc-*`
 *    headers and hop-by-hop headers removed, `X-Forwarded-*` and `Via` added, signed when the pool
 *    signs; bodies stream both ways, and the slot is held until the response ends or the
 *    client goes away.
 *
 * @example
 * ```ts
 * const proxy = createProxyApp({ governor, catalog, poolDomain: "pools.localhost", accessLog });
 * serve({ fetch: proxy.fetch, port: 8080 });
 * ```
 */
export function createProxyApp(deps: ProxyAppDeps): ProxyApp {
  const { governor } = deps;
  const clock = deps.clock ?? governor.clock;
  const directory = deps.directory ?? new CatalogPoolDirectory(deps.catalog);
  const upstreamClient = deps.upstreamClient ?? createUpstreamClient();
  const signedLimit = deps.signedBodyLimitBytes ?? SIGNED_BODY_LIMIT_BYTES;
  const logError = deps.logError ?? ((error: unknown) => console.error("Pool proxy error:", error));
  const checks = { directory, ipPolicy: deps.ipPolicy };
  const policyChecks = callerPolicyChecks({
    trustedProxies: deps.trustedProxies,
    nonces: deps.nonces,
    directory,
    accessLog: deps.accessLog,
    clock,
    jwksTimeoutMs: deps.jwksTimeoutMs,
    jwksNetwork: deps.jwksNetwork,
    logError,
  });
  const sql =
    deps.sql &&
    createSqlHandler({
      ...deps.sql,
      governor,
      clock,
      accessLog: deps.accessLog,
      directory,
      onOriginFailure: deps.onOriginFailure,
    });

  const onError = respondToError(logError);
  const proxy = async (request: Request, env: unknown): Promise<Response> => {
    const headers = requestHeaders(env, request);
    const subdomain = poolSubdomainOf(headers.get("host"), deps.poolDomain);
    if (subdomain === null) {
      return sluiceReply({ error: "not_found", message: "No pool is served at this host." }, 404);
    }
    if (sql && request.method === "OPTIONS") {
      const preflight = await sql.preflight(subdomain, request, headers);
      if (preflight) return preflight;
    }
    const remoteAddress = remoteAddressOf(env);
    const admitted = await admitCaller(checks, subdomain, headers, remoteAddress, clock.now());
    const { pool, key } = admitted;
    // The whole body, read once (before a slot) when a caller policy or origin signing covers it.
    let buffered: Uint8Array | undefined;
    const readWholeBody = async () => {
      continueIfExpected(env);
      // An upload may take as long as the whole request may.
      const limits = { maxBytes: signedLimit, timeoutMs: pool.requestTimeoutMs };
      buffered ??= await readBodyLimited(request, limits, env);
      return buffered;
    };
    if (pool.callerPolicies !== null) {
      await enforceCallerPolicies(policyChecks, admitted, {
        headers,
        peer: remoteAddress,
        source: "proxy",
        method: request.method,
        target: sentTarget(request, env),
        body: readWholeBody,
      });
    }
    // The access log names the caller the trusted proxies forwarded; the origin's
    // X-Forwarded-For gets the socket's peer appended, as every proxy hop does.
    const logged = loggedAddress(policyChecks, remoteAddress, headers);
    if (pool.backend === "postgres" && sql) {
      return sql({ request, env, headers, pool, key, remoteAddress: logged, body: buffered });
    }
    if (pool.backend !== "http") {
      const message = "Database pools are not served by this server (it has no SQL runner).";
      return sluiceReply({ error: "not_implemented", message }, 501);
    }
    refuseAmbiguousPath(request, env);
    const method = request.method;
    const target = requestTarget(request.url);
    const rule = methodRule(method, headers);
    if (rule.action === "refuse") {
      // Only TRACE is refused, asked for itself or through a method-override header: for
      // every key alike, so the answer says what is wrong with the request.
      const message = "TRACE is not proxied: the origin would echo the managed credential.";
      return sluiceReply({ error: "method_not_allowed", message }, 405, {
        allow: FORWARDED_METHODS,
      });
    }
    if (key && key.access === "read") checkReadKey(pool, key, method, target.path, headers);
    if (rule.action === "answer") {
      // Max-Forwards: 0 makes Sluice the final recipient (RFC 9110 7.6.2).
      return new Response(null, {
        status: 200,
        headers: {
          allow: FORWARDED_METHODS,
          [REJECTED_BY_HEADER]: "sluice",
          "content-length": "0",
        },
      });
    }
    const wait = waitRequest(headers);
    const signingSecret = pool.originSigning && key ? directory.signingSecret(key) : null;
    // The origin signature covers the body, so it is read (the key already passed) before the slot.
    const body = signingSecret !== null ? await readWholeBody() : buffered;
    const hold = await admitToSlot({
      governor,
      clock,
      accessLog: deps.accessLog,
      pool,
      key,
      remoteAddress: logged,
      wait,
      request,
      env,
    });
    continueIfExpected(env);
    const credential = directory.credential(pool);
    const extra =
      signingSecret !== null && key && body
        ? signatureHeaders({ body, secret: signingSecret }, key, method, pool, target, clock.now())
        : undefined;
    const { incoming, outgoing: nodeResponse } = nodeBindings(env);
    const outgoing = upstreamRequestHeaders({
      headers,
      rawHeaders: incoming?.rawHeaders,
      httpVersion: incoming?.httpVersion,
      credential,
      remoteAddress,
      forwardedProto: request.url.startsWith("https:") ? "https" : "http",
      bodyLength: body?.byteLength,
      extra,
    });
    applyForwardsLeft(outgoing, rule.forwardsLeft);
    return forwardInSlot({
      hold,
      clock,
      credential,
      nodeResponse,
      watchClient: (listener) => onClientGone(env, request, listener),
      onOriginFailure: deps.onOriginFailure && ((cause) => deps.onOriginFailure?.(request, cause)),
      call: {
        origin: parseOrigin(pool.origin),
        method,
        pathAndQuery: target.pathAndQuery,
        headers: outgoing,
        body: body ?? streamedBody(request, env, method),
        client: upstreamClient,
      },
    });
  };

  const app = new Hono();
  app.all("*", (c) => proxy(c.req.raw, c.env));
  app.onError((error, c) => onError(error, c.req.raw));
  // Every proxied request skips Hono's router and Context; HEAD still goes through Hono,
  // which drops the body of Sluice's own error answers to it.
  const routed = app.fetch;
  app.fetch = (request, env, executionContext) =>
    request.method === "HEAD"
      ? routed(request, env, executionContext)
      : proxy(request, env).catch((error: unknown) => onError(error, request));
  return Object.assign(app, {
    close: () => {
      void upstreamClient.destroy().catch(() => {});
      void deps.sql?.runner.close();
    },
  });
}

/** A read-only key's request (contract 4.1 rule 2): 403 unless every method it asks is a read. */
function checkReadKey(
  pool: PoolRecord,
  key: PoolKeyRecord,
  method: string,
  path: string,
  headers: HeaderLookup,
): void {
  if (!keyAllowsMethod(pool, key, method, path)) {
    throw new ForbiddenError(
      `This key is read-only: ${method} ${path} is not a read on this pool.`,
    );
  }
  for (const overridden of overriddenMethods(headers)) {
    if (!keyAllowsMethod(pool, key, overridden, path)) {
      throw new ForbiddenError(
        `This key is read-only: a method-override header asks for ${overridden.slice(0, 32)}, which is not a read on this pool.`,
      );
    }
  }
}

interface SignedBody {
  body: Uint8Array;
  secret: string;
}

function signatureHeaders(
  signed: SignedBody,
  key: PoolKeyRecord,
  method: string,
  pool: PoolRecord,
  target: RequestTarget,
  now: number,
): Record<string, string> {
  return signRequest({
    secret: signed.secret,
    keyId: key.id,
    method,
    url: parseOrigin(pool.origin).basePath + target.pathAndQuery,
    body: signed.body,
    timestamp: now,
  });
}

/**
 * The caller's body as a stream, or null when the request has none. On Node the request
 * stream itself is piped (no web-stream round trip).
 */
function streamedBody(request: Request, env: unknown, method: string): UpstreamBody {
  if (method === "HEAD") return null;
  const { incoming } = nodeBindings(env);
  if (!incoming) return request.body;
  // HTTP/1.1 framing: without a length or chunked encoding there is no body.
  const length = incoming.headers["content-length"];
  if ((length === undefined || length === "0") && !incoming.headers["transfer-encoding"])
    return null;
  return incoming;
}
