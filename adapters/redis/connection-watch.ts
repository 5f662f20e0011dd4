import type { Redis } from "ioredis";
import type { StoreConnections } from "./connection.js";
import type { DataLossWatch } from "./data-loss-watch.js";
import type { EventSubscriptions } from "./event-subscriptions.js";
import type { ConnectionHealth } from "./health.js";
import type { IdleTracker } from "./idle-tracker.js";
import type { ProcessLedger } from "./process-ledger.js";
import { afterRecovery, rejoinAfterBlip } from "./recovery.js";
import type { RedisEngine } from "./redis-engine.js";
import type { ReplyFields } from "./replies.js";

/** What {@link watchConnections} wires together. */
export interface WatchedParts {
  connections: StoreConnections;
  monitor: ConnectionHealth;
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
 * Redis down (a reconnect probes at once); other processes' events arriving on the subscriber
 * go to the engine, and their announcements that Redis lost its data to the data-loss watch;
 * a subscriber that comes back while Redis is up (a blip: Redis kept
 * everything) rejoins this process's waiters, and one that comes back while Redis is down
 * leaves that to the recovery, plus one more rejoin when the store turns ok (others may have
 * dropped the waiters until it listened again). Every turn to ok also sends the releases and
 * cancels Redis did not get ({@link afterRecovery}).
 *
 * @example
 * ```ts
 * watchConnections({ connections, monitor, events, engine, ledger, idle, closed: () => false });
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
    if (!parts.closed()) monitor.markDown(new Error("connection to Redis lost"));
  });
  // A cluster stays up while one master goes: losing any node means its shard may come back
  // (failover) without the latest writes, so the recovery puts this process's slots back.
  // (Before the first slot map, ioredis also drops start-up nodes that turn out to be
  // replicas; those, and replicas later, hold nothing of ours.)
  command.on("-node", (node: Redis) => {
    if (parts.closed() || command.status !== "ready" || node.options.readOnly) return;
    monitor.markDown(new Error(`connection to Redis Cluster master ${nodeName(node)} lost`));
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
    if (!monitor.up) {
      rejoinWhenUp = true;
      return;
    }
    // Redis went away again: the next reconnect rejoins; a waiter's deadline still asks Redis.
    idle.track(rejoinAfterBlip({ events, engine, ledger }).catch(() => {}));
  });
  monitor.onChange((status) => {
    if (status.state !== "ok") return;
    const rejoin = rejoinWhenUp;
    rejoinWhenUp = false;
    idle.track(afterRecovery({ events, engine, ledger }, rejoin));
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
