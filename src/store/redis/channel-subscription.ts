import { disconnect, subscriberFor, type RedisConnection } from './connection.js';

/**
 * One pub/sub channel of a store, heard through one subscriber connection that the first
 * `listen()` opens: a replica that never listens opens none. The task store's change events and
 * the session store's request cancels each have one.
 */
export class ChannelSubscription {
  private subscriber?: RedisConnection;
  private subscription?: Promise<void>;
  private closed = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly channel: string,
    /** The store's name, for the rejection after close. */
    private readonly store: string,
    private readonly onMessage: (message: string) => void,
  ) {}

  /** Resolves once the channel's messages of every replica arrive; rejects once closed. */
  listen(): Promise<void> {
    // After close() a new connection would never be quit.
    if (this.closed) return Promise.reject(new Error(`${this.store} is closed`));
    if (!this.subscription) {
      // SUBSCRIBE waits out an outage instead of failing and leaving listeners deaf; ioredis
      // subscribes again on every reconnect (a Cluster on whichever node it picks then).
      const subscriber = subscriberFor(this.redis);
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.channel) this.onMessage(message);
      });
      this.subscriber = subscriber;
      this.subscription = subscriber.subscribe(this.channel).then(() => undefined);
      // Only close() makes SUBSCRIBE fail; whoever awaits listen() still sees the rejection.
      this.subscription.catch(() => {});
    }
    return this.subscription;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.subscriber) await disconnect(this.subscriber);
  }
}
