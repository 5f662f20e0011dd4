import type { Redis } from "ioredis";
import type { StoreConnections } from "./connection.js";
import type { DataLossWatch } from "./data-loss-watch.js";
import type { EventSubscriptions } from "./event-subscriptions.js";
import type { IdleTracker } from "./idle-tracker.js";
import type { ProcessLedger } from "./process-ledger.js";
import { afterRecovery, type RecoveryScope, rejoinAfterBlip } from "./recovery.js";
import type { RedisEngine } from "./redis-engine.js";
import type { ReplyFields } from "./replies.js";
import type { Shard, ShardHealth } from "./shard-health.js";

/** What {@link watchConnections} wires together. */
export interface WatchedParts {
  connections: StoreConnections;
  monitor: ShardHealth;
  /** The groups of a shard (what its recovery puts back). */
  scopeOf(shard: Shard): RecoveryScope;
  /** The groups of every shard that is up now. */
  upScope(): RecoveryScope;
  events: EventSubscriptions;
  engine: RedisEngine;
  ledger: ProcessLedger;
  idle: IdleTracker;
  dataLoss: DataLossWatch;
  /** The store was closed: connection events mean nothing any more. */
  closed(): boolean;
}

/**
 * Reacts to the store's two connections and its health: a lost command connection marks
 * Redis down (a lost cluster master, its shard; a reconnect probes at once); other processes'
 * events arriving on the subscriber go to the engine, and their announcements that a group
 * lost its data to the data-loss watch; a subscriber that comes back (a blip: Redis kept
 * everything) rejoins this process's waiters on the shards that are up, and leaves those of
 * a shard that is down to its recovery, plus one more rejoin when the shard is back (others
 * may have dropped the waiters until it listened again). Every shard back also sends the
 * releases and cancels it did not get ({@link afterRecovery}).
 *
 * @example
 * ```ts
 * watchConnections({ connections, monitor, scopeOf, upScope, events, engine, ledger, idle, dataLoss, closed: () => false });
 * ```
 */
export function watchConnections(parts: WatchedParts): void {
  const { connections, monitor, events, engine, ledger, idle } = parts;
  const { command, subscriber } = connections;
  let subscriberLost = false;
  let rejoinWhenUp = false;
  // Errors also surface as failed calls; without listeners ioredis would log each one.
  command.on("error", () => {});
  subscriber.on("error", () => {});
  command.on("close", () => {
    if (!parts.closed()) monitor.markDown(new Error("connection to Redis lost"), { whole: true });
  });
  // A cluster stays up while one master goes: losing any node means its shard may come back
  // (failover, restart) without the latest writes, so its recovery puts this process's slots
  // there back; the other shards keep serving.
  // (Before the first slot map, ioredis also drops start-up nodes that turn out to be
  // replicas; those, and replicas later, hold nothing of ours.)
  command.on("-node", (node: Redis) => {
    if (parts.closed() || command.status !== "ready" || node.options.readOnly) return;
    const name = nodeName(node);
    monitor.markDown(new Error(`connection to Redis Cluster master ${name} lost`), { node: name });
  });
  command.on("ready", () => monitor.nudge());
  // A cluster's subscriber is one connection per master: ioredis reports one going away and
  // all of them subscribed again (after the slot map changed) with these events.
  const lost = subscriber.isCluster ? "-subscriber" : "close";
  const back = subscriber.isCluster ? "subscribersReady" : "ready";
  // ioredis subscribes again to every channel it held when the connection comes back.
  subscriber.on("smessage", (_channel: string, message: string) => {
    const received = parseEvents(message);
    if (received) engine.receive(received);
  });
  // Another process found Redis had lost its data: this one adopts its slots back too.
  subscriber.on("message", (channel: string, message: string) => {
    if (channel === parts.dataLoss.channel && !parts.closed()) parts.dataLoss.heard(message);
  });
  subscriber.on(lost, () => {
    if (!parts.closed()) subscriberLost = true;
  });
  subscriber.on(back, () => {
    if (!subscriberLost || parts.closed()) return;
    subscriberLost = false;
    if (!monitor.up) rejoinWhenUp = true;
    // Redis went away again: the next reconnect rejoins; a waiter's deadline still asks Redis.
    const scope = parts.upScope();
    idle.track(rejoinAfterBlip({ events, engine, ledger, scope }).catch(() => {}));
  });
  monitor.onShard((shard, up) => {
    if (!up) return;
    const rejoin = rejoinWhenUp;
    if (monitor.up) rejoinWhenUp = false;
    idle.track(afterRecovery({ events, engine, ledger, scope: parts.scopeOf(shard) }, rejoin));
  });
}

function nodeName(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}

function parseEvents(message: string): ReplyFields | null {
  try {
    return JSON.parse(message) as ReplyFields;
  } catch {
    return null;
  }
}
