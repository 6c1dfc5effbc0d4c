/**
 * The cluster's one event bus: Redis pub/sub on one channel (`<prefix>bus`). Every member
 * publishes what it alone knows (a change its lease-held poller saw, a session ended or changed) and
 * hears every message once, its own included, and delivers it to its own subscribers — so each
 * subscriber anywhere hears each settled change once.
 *
 * Pub/sub keeps nothing: while a member is cut off from Redis it hears nothing, and what was
 * published meanwhile is not replayed to it (documented in docs/cluster.md). Pollers keep their
 * last-seen state, so a change is reported after the outage rather than during it.
 */
import type { Logger } from '../core/log.js';
import type { RedisLink } from './redis.js';

export type BusMessage =
  /** A resource changed (a lease holder's poller saw it); `f` is the holder's fencing token. */
  | { t: 'updated'; uri: string; root: string; f: number }
  /** A source's list changed. */
  | { t: 'list'; root: string; f: number }
  /** A 2025-era session's record changed (`sync`) or the session ended (`end`). */
  | { t: 'session'; id: string; a: 'sync' | 'end'; from: string }
  /** A member started watching something of a source: its lease holder should look now, not at its next tick. */
  | { t: 'interest'; root: string };

export class EventBus {
  private readonly handlers = new Set<(message: BusMessage) => void>();
  private readonly channel: string;
  private readonly ready: Promise<void>;
  published = 0;
  received = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly logger: Logger,
  ) {
    this.channel = `${link.prefix}bus`;
    link.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      let message: BusMessage;
      try {
        message = JSON.parse(text) as BusMessage;
      } catch {
        return;
      }
      this.received += 1;
      for (const handler of [...this.handlers]) {
        try {
          handler(message);
        } catch (error) {
          this.logger.warn({ err: error }, 'a cluster bus message could not be handled');
        }
      }
    });
    this.ready = link.subscriber.subscribe(this.channel).then(() => undefined);
    this.ready.catch(() => undefined);
  }

  /** Resolves once this member hears the bus. */
  subscribed(): Promise<void> {
    return this.ready;
  }

  on(handler: (message: BusMessage) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Publishes; false when Redis is unreachable or hung (the message is dropped, the caller goes on at once or after the Redis timeout). */
  async publish(message: BusMessage): Promise<boolean> {
    try {
      await this.link.call((client) => client.publish(this.channel, JSON.stringify(message)));
      this.published += 1;
      return true;
    } catch (error) {
      this.logger.debug({ err: error }, 'could not publish on the cluster bus');
      return false;
    }
  }

  /** The channel name, for scripts that publish under a fencing check. */
  get name(): string {
    return this.channel;
  }
}
