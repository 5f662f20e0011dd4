import type { LearnedLimits, StorePoolConfig } from "../../src/store/types.js";
import type { LearnedTuple } from "./replies.js";

/** A number, or the empty string Lua reads as "none". */
export function optionalArg(value: number | null): string {
  return value === null ? "" : String(value);
}

/** set-learned arguments: concurrency, rpm, pausedUntil. */
export function learnedArgs(learned: LearnedLimits): string[] {
  return [optionalArg(learned.concurrency), optionalArg(learned.rpm), String(learned.pausedUntil)];
}

/** set-learned's further arguments: the probe backoff's level, failures, failedAt ('' = none). */
export function probeArgs(learned: LearnedLimits): string[] {
  const probe = learned.probe;
  if (!probe) return ["", "", ""];
  return [String(probe.level), String(probe.failures), String(probe.failedAt)];
}

/** What a move carries from the old group: learned limits and the RPM log (newest first). */
export interface Carried {
  learned: LearnedTuple;
  log: readonly string[];
}

/** A move from a group that no longer had the pool: nothing learned to carry. */
export const NOTHING_CARRIED: Carried = { learned: [null, null, 0], log: [] };

/**
 * upsert-pool arguments (see `lua/upsert-pool.lua`). `carried` completes a move: it overrides
 * a forwarding record left in the target group and seeds what the old group knew.
 * `restoreGraceMs`: how long a pool this call creates admits nobody new (0: none), for a
 * pool Redis lost.
 *
 * @example
 * ```ts
 * await runner.run(scripts.group["upsert-pool"], [base], [...common, ...configArgs(config, tag, null)]);
 * ```
 */
export function configArgs(
  config: StorePoolConfig,
  tag: string,
  carried: Carried | null,
  restoreGraceMs = 0,
): string[] {
  const args = [
    String(config.maxConcurrent),
    String(config.queueSize),
    String(config.termMs),
    String(config.requestTimeoutMs),
    optionalArg(config.rpm),
    config.budget?.id ?? "",
    String(config.budget?.reservedConcurrent ?? 0),
    tag,
    String(restoreGraceMs),
  ];
  if (!carried) return args;
  const [concurrency, rpm, pausedUntil] = carried.learned;
  args.push("1", ...learnedArgs({ concurrency, rpm, pausedUntil }));
  for (const time of carried.log) args.push(String(time));
  return args;
}
