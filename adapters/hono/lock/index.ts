export type { AttemptCaller } from "./access-attempt.js";
export { logFailed, logGranted } from "./access-attempt.js";
export { createLockApp } from "./create-lock-app.js";
export type { LockAppDeps } from "./lock-deps.js";
export {
  GOVERNOR_HEADERS,
  grantHeaders,
  jsonReply,
  lockErrorResponse,
  REFUSED_BY_POLICY_HEADER,
  REJECTED_BY_HEADER,
  RETRY_AFTER_MS_HEADER,
  respondToError,
  retryAfterSeconds,
} from "./lock-responses.js";
export { ClientGoneError, clientGoneSignal, nodeBindings, onClientGone } from "./node-bindings.js";
export type { PoolDirectory, TrafficCatalog } from "./pool-directory.js";
export { CatalogPoolDirectory } from "./pool-directory.js";
export {
  LOCK_BODY_LIMIT_BYTES,
  parseOptionalJsonObject,
  readBodyLimited,
} from "./request-body.js";
export type { WaitRequest } from "./wait-options.js";
export {
  NO_QUEUE_HEADER,
  parseBodyWaitMs,
  parseNoQueueHeader,
  parseQueueTimeoutHeader,
  QUEUE_TIMEOUT_HEADER,
  waitRequest,
} from "./wait-options.js";
