export type { ProxyApp } from "./create-proxy-app.js";
export { createProxyApp } from "./create-proxy-app.js";
export type { ForwardInput } from "./forward.js";
export { forwardInSlot } from "./forward.js";
export { connectionListed, HOP_BY_HOP_HEADERS, isHopByHop } from "./hop-by-hop.js";
export type { ProxyAppDeps } from "./proxy-deps.js";
export { SIGNED_BODY_LIMIT_BYTES } from "./proxy-deps.js";
export type { UpstreamHeaderInput } from "./request-headers.js";
export { upstreamRequestHeaders } from "./request-headers.js";
export type { ResponseHeaderRecord } from "./response-headers.js";
export { clientResponseHeaders } from "./response-headers.js";
export type { SlotHold } from "./slot-hold.js";
export { holdSlot } from "./slot-hold.js";
export type {
  UpstreamBody,
  UpstreamCall,
  UpstreamClient,
  UpstreamExchange,
  UpstreamHead,
  UpstreamSink,
} from "./upstream-call.js";
export { callUpstream, createUpstreamClient } from "./upstream-call.js";
export type { ParsedOrigin, RequestTarget } from "./upstream-target.js";
export { parseOrigin, poolSubdomainOf, requestTarget } from "./upstream-target.js";
