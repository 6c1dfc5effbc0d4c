/**
 * One poller per source. Git, SQL and HTTP sources are polled by one member at a time: the holder
 * of the source's lease (a Redis key with an expiry, renewed every tick) and its fencing token (a
 * counter bumped on every hand-over). Every member records what its subscribers watch in the
 * source's interest set (a sorted set scored by expiry, refreshed every tick); the holder runs the
 * provider's own watch on each URI of that set and publishes what it sees on the bus — through a
 * script that publishes only while the lease and the token are still its own, so a holder that
 * stalled past its lease cannot report anything after its successor took over. Every member hears
 * the bus and tells its own subscribers.
 *
 * When the holder dies its lease expires (`leaseMs`) and the next member to tick takes it: takeover
 * within leaseMs + tickMs. What the holder last saw of each URI (a digest of its contents) is kept
 * in Redis (`seen:<root>`), written with each change it publishes: a new holder compares what it
 * reads with it and reports a change made while nobody held the lease, once. A subscriber's member
 * records what it read there first when nothing is recorded yet, so a change between the answer
 * and the holder's baseline is reported too. File sources are not relayed: each member watches its
 * own disk.
 *
 * A lease is sealed (seal.ts) with the shared secret for its key, naming its holder and an expiry
 * one lease period ahead. A member honours a lease only while its seal verifies and its expiry has
 * not passed (and lies no further ahead than two periods): a lease written by anyone else — with
 * any Redis expiry, even none — is taken over at the next tick, and a replayed one once its sealed
 * expiry passes, so nothing written to Redis silences a source for longer than one lease period.
 */
import type { Logger } from '../core/log.js';
import type { WatchRelay } from '../core/subscriptions.js';
import type { Provider } from '../core/types.js';
import type { BusMessage, EventBus } from './bus.js';
import type { RedisLink } from './redis.js';
import { DropCounter, type Seal } from './seal.js';
import { digestOf, seenKeyOf, SourceLease, type LeaseHub } from './source-lease.js';

export interface LeaseOptions {
  /** Lease lifetime, ms. @default 3000 */
  leaseMs?: number;
  /** How often members renew, contend and refresh interest, ms. @default 1000 */
  tickMs?: number;
  /** How long a member's interest in a URI outlives its last refresh, ms. @default 10000 */
  interestMs?: number;
}

/** Whether a provider is polled (one member at a time) rather than watched on each member's disk. */
export function isPolled(provider: Provider): boolean {
  return !provider.root.startsWith('file:');
}

export class ClusterWatches implements WatchRelay, LeaseHub {
  private readonly sources = new Map<string, SourceLease>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly listListeners = new Map<string, Set<() => void>>();
  private readonly timer: NodeJS.Timeout;
  private readonly stopBus: () => void;
  readonly leaseMs: number;
  readonly tickMs: number;
  readonly interestMs: number;
  /** Hand-overs this member won, and changes it published as holder (for /metrics). */
  acquired = 0;
  fencedOut = 0;
  /** Leases found in Redis that did not verify (forged, replayed past their expiry, malformed). */
  readonly leaseDrops: DropCounter;

  constructor(
    readonly link: RedisLink,
    readonly bus: EventBus,
    readonly member: string,
    readonly logger: Logger,
    readonly seal: Seal,
    options: LeaseOptions = {},
  ) {
    this.leaseDrops = new DropCounter('source leases', (fields, text) => logger.warn(fields, text));
    this.leaseMs = options.leaseMs ?? 3_000;
    this.tickMs = options.tickMs ?? 1_000;
    this.interestMs = options.interestMs ?? 10_000;
    this.stopBus = bus.on((message) => this.heard(message));
    this.timer = setInterval(() => void this.tick(), this.tickMs).unref();
  }

  watch(provider: Provider, href: string, onChange: () => void): Promise<() => void> | undefined {
    if (!isPolled(provider) || provider.watch === undefined) return undefined;
    const watch = provider.watch.bind(provider);
    return (async () => {
      // What the subscriber sees now is read beside the check below, not after it: a first
      // subscribe waits for one read of the source, as on one process.
      const seen = this.unrecorded(provider, href);
      // What cannot be watched is refused here as on one process: the provider's own watch is
      // started once to check (NotFoundError for a missing resource), then stopped; the holder polls.
      const probe = await watch(href, () => undefined);
      probe();
      const source = this.source(provider);
      let set = this.listeners.get(href);
      if (set === undefined) this.listeners.set(href, (set = new Set()));
      set.add(onChange);
      source.local.add(href);
      // Answered once what the subscriber saw is on record for the holder to compare with.
      await this.record(provider, href, await seen);
      void this.declare(source, [href], true);
      return () => {
        set.delete(onChange);
        if (set.size === 0) {
          this.listeners.delete(href);
          source.local.delete(href);
        }
      };
    })();
  }

  /** What a subscriber here reads of `href` now, when no holder has recorded anything of it yet. */
  private async unrecorded(provider: Provider, href: string): Promise<string | undefined> {
    try {
      const recorded = await this.link.call((client) => client.hexists(seenKeyOf(provider), href));
      return recorded === 1 ? undefined : await digestOf(provider, href);
    } catch (error) {
      this.logger.debug({ err: error, uri: href }, 'could not learn whether a URI is on record');
      return undefined;
    }
  }

  /**
   * Records `digest` (what a subscriber read) as the last seen of `href` when nothing is recorded
   * yet: the holder takes its own baseline one bus hop after the subscribe is answered and compares
   * it with this, so a change made in between is reported, not folded into that baseline. Never
   * overwrites: a recorded value is a holder's last report, which a successor must compare against.
   */
  private async record(
    provider: Provider,
    href: string,
    digest: string | undefined,
  ): Promise<void> {
    if (digest === undefined) return;
    try {
      await this.link.call((client) => client.hsetnx(seenKeyOf(provider), href, digest));
    } catch (error) {
      this.logger.debug({ err: error, uri: href }, 'could not record what a subscriber saw');
    }
  }

  listChanged(provider: Provider, listener: () => void): Promise<() => void> | undefined {
    if (!isPolled(provider) || provider.onListChanged === undefined) return undefined;
    this.source(provider);
    let set = this.listListeners.get(provider.root);
    if (set === undefined) this.listListeners.set(provider.root, (set = new Set()));
    set.add(listener);
    return Promise.resolve(() => void set.delete(listener));
  }

  /** Sources whose lease this member holds. */
  held(): string[] {
    return [...this.sources.values()].filter((s) => s.token > 0).map((s) => s.provider.root);
  }

  /** Runs one renewal round now (tests and start-up). */
  async tick(): Promise<void> {
    await Promise.all([...this.sources.values()].map((source) => source.tick()));
  }

  /**
   * Stops polling and hearing. Leases are handed back at once, unless `abandon` (what the others
   * see when a member crashes: its leases expire after `leaseMs`).
   */
  async close(options: { abandon?: boolean } = {}): Promise<void> {
    clearInterval(this.timer);
    this.stopBus();
    await Promise.all(
      [...this.sources.values()].map((source) =>
        options.abandon === true ? source.abandon() : source.release(),
      ),
    );
  }

  /** Records interest in `hrefs` for the holder; `nudge` has it look now rather than at its next tick. */
  async declare(source: SourceLease, hrefs: string[], nudge = false): Promise<void> {
    if (hrefs.length === 0) return;
    const expiry = Date.now() + this.interestMs;
    try {
      await this.link.call((client) =>
        client.zadd(source.interestKey, 'GT', ...hrefs.flatMap((href) => [String(expiry), href])),
      );
      await this.link.call((client) => client.pexpire(source.interestKey, this.interestMs * 2));
      if (nudge) void this.bus.publish({ t: 'interest', root: source.provider.root });
    } catch (error) {
      this.logger.debug({ err: error }, 'could not record watch interest');
    }
  }

  /** The lease value this member writes for the lease `tag`: its name, then its seal (expiring one period ahead). */
  leaseValue(tag: string): string {
    return `${this.member}\n${this.seal.seal(tag, this.member, Date.now() + this.leaseMs)}`;
  }

  /**
   * Who holds the lease `value` found under `tag`: undefined when it does not verify, has expired,
   * or claims more than two periods ahead (no member writes that).
   */
  leaseHolder(tag: string, value: string): string | undefined {
    const cut = value.lastIndexOf('\n');
    const opened = cut < 0 ? undefined : this.seal.open(tag, value.slice(cut + 1), 4_096);
    if (opened === undefined || !opened.ok) {
      this.leaseDrops.dropped(opened?.reason ?? 'unsealed');
      return undefined;
    }
    if (
      opened.payload !== value.slice(0, cut) ||
      opened.expiry === 0 ||
      opened.expiry > Date.now() + 2 * this.leaseMs
    ) {
      this.leaseDrops.dropped('malformed');
      return undefined;
    }
    return value.slice(0, cut);
  }

  private source(provider: Provider): SourceLease {
    let source = this.sources.get(provider.root);
    if (source === undefined || source.provider !== provider) {
      void source?.release();
      source = new SourceLease(this, provider);
      this.sources.set(provider.root, source);
      void source.tick();
    }
    return source;
  }

  private heard(message: BusMessage): void {
    if (message.t === 'updated') {
      for (const listener of [...(this.listeners.get(message.uri) ?? [])]) listener();
    } else if (message.t === 'list') {
      for (const listener of [...(this.listListeners.get(message.root) ?? [])]) listener();
    } else if (message.t === 'interest') {
      const source = this.sources.get(message.root);
      if (source !== undefined && source.token > 0) void source.sync();
    }
  }
}
