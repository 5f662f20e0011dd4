import type { RedisClient } from "./cluster.js";
import type { GroupEvents } from "./group-runner.js";
import type { RedisKeys } from "./keys.js";

/**
 * This process's subscriptions to the groups' event channels (sharded Pub/Sub: each channel
 * shares its group's hash tag), on the store's subscriber connection.
 *
 * @example
 * ```ts
 * const events = new EventSubscriptions(subscriber, keys, originId);
 * await events.listen("{p:llm}");
 * ```
 */
export class EventSubscriptions implements GroupEvents {
  /** The subscription of each group tag (resolved once Redis confirmed it). */
  private readonly subscriptions = new Map<string, Promise<void>>();

  constructor(
    private readonly subscriber: RedisClient,
    private readonly keys: RedisKeys,
    private readonly originId: string,
  ) {}

  /** Resolves once subscribed; a failed subscription is forgotten, so the next call retries. */
  listen(tag: string): Promise<void> {
    let pending = this.subscriptions.get(tag);
    if (!pending) {
      pending = this.subscriber.ssubscribe(this.channel(tag)).then(
        () => {},
        (error: unknown) => {
          this.subscriptions.delete(tag);
          throw error;
        },
      );
      this.subscriptions.set(tag, pending);
    }
    return pending;
  }

  unlisten(tag: string): void {
    if (!this.subscriptions.delete(tag)) return;
    this.subscriber.sunsubscribe(this.channel(tag)).catch(() => {});
  }

  /**
   * After a reconnect: subscribes to every channel again (of the groups `inScope` accepts: a
   * shard back while others are still down) and resolves once Redis confirmed it (ioredis
   * subscribes again on its own, without telling when that is done).
   */
  async renewAll(inScope: (tag: string) => boolean = () => true): Promise<void> {
    const tags = [...this.subscriptions.keys()].filter(inScope);
    await Promise.all(tags.map((tag) => this.subscriber.ssubscribe(this.channel(tag))));
  }

  private channel(tag: string): string {
    return this.keys.eventChannel(tag, this.originId);
  }
}
