/**
 * The cluster's one event bus: Redis pub/sub on one channel (`<prefix>bus`). Every member
 * publishes what it alone knows (a change its lease-held poller saw, a session ended or changed) and
 * hears every message once, its own included, and delivers it to its own subscribers — so each
 * subscriber anywhere hears each settled change once.
 *
 * Pub/sub keeps nothing: while a member is cut off from Redis it hears nothing, and what was
 * published meanwhile is not replayed to it (documented in docs/cluster.md). Pollers keep their
 * last-seen state, so a change is reported after the outage rather than during it.
 *
 * Every message is sealed (seal.ts) for this channel with the shared secret and a short expiry: one
 * that does not verify — published by a Redis client that is not a member, replayed from another
 * channel, stale, oversized or of no known shape — is dropped before any handler sees it, counted
 * (`reservoir_cluster_bus_dropped`) and logged at most once a minute.
 */
import type { Logger } from '../core/log.js';
import type { RedisLink } from './redis.js';
import { DropCounter, type Seal } from './seal.js';

/** How long a bus message stays valid after it is sealed (members' clocks may differ this much). */
export const BUS_MESSAGE_TTL_MS = 60_000;
/** Longest bus message accepted, in characters (a URI is at most 64 Ki characters). */
export const MAX_BUS_MESSAGE_CHARS = 256 * 1024;

export type BusMessage =
  /** A resource changed (a lease holder's poller saw it); `f` is the holder's fencing token. */
  | { t: 'updated'; uri: string; root: string; f: number }
  /** A source's list changed. */
  | { t: 'list'; root: string; f: number }
  /**
   * A 2025-era session's record changed (`sync`, `v` its version now) or the session ended (`end`);
   * or a member holding the session's GET stream follows its record up to version `v` (`synced`).
   */
  | { t: 'session'; id: string; a: 'sync' | 'end' | 'synced'; from: string; v?: number }
  /** A member started watching something of a source: its lease holder should look now, not at its next tick. */
  | { t: 'interest'; root: string };

export class EventBus {
  private readonly handlers = new Set<(message: BusMessage) => void>();
  private readonly channel: string;
  private readonly ready: Promise<void>;
  published = 0;
  received = 0;
  /** Messages dropped because they did not verify. */
  readonly drops: DropCounter;

  constructor(
    private readonly link: RedisLink,
    private readonly logger: Logger,
    private readonly seal: Seal,
  ) {
    this.channel = `${link.prefix}bus`;
    this.drops = new DropCounter('cluster bus messages', (fields, text) =>
      logger.warn(fields, text),
    );
    link.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const opened = seal.open(this.tag, text, MAX_BUS_MESSAGE_CHARS);
      if (!opened.ok) return this.drops.dropped(opened.reason);
      if (!isBusMessage(opened.payload)) return this.drops.dropped('malformed');
      const message = opened.payload;
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
      await this.link.call((client) => client.publish(this.channel, this.sealed(message)));
      this.published += 1;
      return true;
    } catch (error) {
      this.logger.debug({ err: error }, 'could not publish on the cluster bus');
      return false;
    }
  }

  /** `message` as published: sealed for this channel, valid for BUS_MESSAGE_TTL_MS. */
  sealed(message: BusMessage): string {
    return this.seal.seal(this.tag, message, Date.now() + BUS_MESSAGE_TTL_MS);
  }

  private get tag(): string {
    return `bus:${this.channel}`;
  }

  /** The channel name, for scripts that publish under a fencing check. */
  get name(): string {
    return this.channel;
  }
}

/** Whether `value` is a session record's edit count (its `version`, a bus message's `v`): a whole number ≥ 0. */
export function isEditCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Whether `value` has the shape of a bus message (its fields of the right types and sizes). */
function isBusMessage(value: unknown): value is BusMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  const text = (v: unknown): boolean => typeof v === 'string' && v.length > 0 && v.length <= 65_536;
  switch (m['t']) {
    case 'updated':
      return text(m['uri']) && text(m['root']) && Number.isSafeInteger(m['f']);
    case 'list':
      return text(m['root']) && Number.isSafeInteger(m['f']);
    case 'session':
      return (
        text(m['id']) &&
        (m['a'] === 'sync' || m['a'] === 'end' || m['a'] === 'synced') &&
        text(m['from']) &&
        (m['v'] === undefined || isEditCount(m['v']))
      );
    case 'interest':
      return text(m['root']);
    default:
      return false;
  }
}
