import type { AccessLogEntry } from "../../src/access-log/types.js";

/** An admitted Lock API attempt on pool "llm"; override what a test is about. */
export function accessLogEntry(overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    at: 1_700_000_000_000,
    pool: "llm",
    keyId: 1,
    outcome: "admitted",
    reason: null,
    queuedMs: 0,
    remoteAddress: "127.0.0.1",
    source: "lock",
    upstreamStatus: null,
    ...overrides,
  };
}
