/**
 * Counted watches and fan-out. The hub keeps one provider watch per URI, however many subscribers
 * hold it: the first retain starts the provider's watch, the last release stops it. List-change
 * listening is counted the same way, and list changes are coalesced (a burst of thousands of file
 * events yields a handful of notifications).
 *
 * A Channel (channel.ts) is one delivery route — a 2025 session, a stdio connection, the HTTP
 * listen bus — holding one hub retain per URI. Both protocol eras share the hub's counts. Whether a
 * principal may subscribe is decided by access control (`AccessControl.subscribable`).
 */
import { Channel, type Delivery, type Hub } from './channel.js';
import { InvalidArgumentError, NotFoundError, ReservoirError } from './errors.js';
import type { Logger } from './log.js';
import type { Registry } from './registry.js';
import type { Principal } from './principal.js';
import type { Provider } from './types.js';
import { parseUri } from './uri.js';

/**
 * Where watches go when several processes serve one service (cluster mode): a relay may take over
 * a provider's watching (one process polls, every process hears), or leave it local (undefined).
 */
export interface WatchRelay {
  /** Watches `href` of `provider` across the cluster, or undefined to watch it here as usual. */
  watch(provider: Provider, href: string, onChange: () => void): Promise<() => void> | undefined;
  /** Listens to `provider`'s list changes across the cluster, or undefined to listen here. */
  listChanged(provider: Provider, listener: () => void): Promise<() => void> | undefined;
}

export interface SubscriptionOptions {
  /**
   * Delay before the first list_changed of a burst, ms: what a burst shorter than it (beyond the
   * files watcher's own 10 ms batch) is merged into one notification by; the interval below is what
   * bounds a storm. @default 20
   */
  listChangeDelayMs?: number;
  /** Least time between two list_changed notifications during a burst, ms. @default 1000 */
  listChangeIntervalMs?: number;
  /** URIs one channel may hold. @default 10000 */
  maxPerChannel?: number;
}

interface Watch {
  count: number;
  stop: () => void;
  listeners: Set<(uri: string) => void>;
}

/** What the hub holds right now; tests and /metrics read it to prove nothing leaks. */
export interface SubscriptionStats {
  /** URIs with a running provider watch. */
  watches: number;
  /** Hub retains across all URIs. */
  retains: number;
  /** Listeners of list changes. */
  listListeners: number;
  /** Providers whose list-change listening is running. */
  listWatchers: number;
  /** Open channels. */
  channels: number;
}

export { Channel, type Delivery } from './channel.js';

export class Subscriptions implements Hub {
  readonly maxPerChannel: number;
  private readonly watches = new Map<string, Watch>();
  private readonly pending = new Map<string, Promise<Watch>>();
  private readonly listListeners = new Set<() => void>();
  private listStops: (() => void)[] = [];
  private listStarting: Promise<void> | undefined;
  private readonly channels = new Set<Channel>();
  private readonly delayMs: number;
  private readonly intervalMs: number;
  private listTimer: NodeJS.Timeout | undefined;
  private lastListEmit = 0;
  private relay: WatchRelay | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly logger: Logger,
    options: SubscriptionOptions = {},
  ) {
    this.delayMs = options.listChangeDelayMs ?? 20;
    this.intervalMs = options.listChangeIntervalMs ?? 1000;
    this.maxPerChannel = options.maxPerChannel ?? 10_000;
  }

  /** Hands watches to a cluster relay from now on (watches already running stay where they are). */
  relayThrough(relay: WatchRelay): void {
    this.relay = relay;
  }

  /** Whether any mounted provider can watch resources / report list changes. */
  get canSubscribe(): boolean {
    return this.registry.providers().some((p) => p.watch !== undefined);
  }

  get canListChange(): boolean {
    return this.registry.providers().some((p) => p.onListChanged !== undefined);
  }

  /** A new delivery route, holding at most `max` URIs (default `maxPerChannel`). */
  channel(delivery: Delivery, max = this.maxPerChannel): Channel {
    const channel = new Channel(this, delivery, max);
    this.channels.add(channel);
    return channel;
  }

  /** Tells every route that the prompt or tool list changed (each route filters for its clients). */
  broadcast(kind: 'prompts' | 'tools'): void {
    for (const channel of this.channels) channel.notify(kind);
  }

  /**
   * The mounted sources changed (a config reload mounted or unmounted some): list-change listening
   * moves to the providers mounted now, and list listeners hear one (coalesced) list change.
   */
  async sourcesChanged(): Promise<void> {
    if (this.listListeners.size > 0 && this.listStarting === undefined) {
      const stops = this.listStops;
      this.listStops = [];
      for (const stop of stops) stop();
      this.listStarting = this.startList().finally(() => (this.listStarting = undefined));
      await this.listStarting;
    }
    if (this.listListeners.size > 0) this.listChangedSoon();
  }

  stats(): SubscriptionStats {
    let retains = 0;
    for (const watch of this.watches.values()) retains += watch.count;
    return {
      watches: this.watches.size,
      retains,
      listListeners: this.listListeners.size,
      listWatchers: this.listStops.length,
      channels: this.channels.size,
    };
  }

  /**
   * Normalises a client URI and retains a watch on it. Resolves with the canonical URI and the
   * release function; throws NotFoundError (or InvalidUriError) for anything that cannot be
   * watched — and then starts nothing.
   */
  async retain(
    uri: string,
    listener: (uri: string) => void,
    principal?: Principal,
  ): Promise<{ uri: string; release: () => void }> {
    const href = parseUri(uri).href;
    // A URI the principal may not subscribe to is refused exactly like a missing one.
    if (!(await this.authorized(principal, href))) throw new NotFoundError(uri);
    let watch = this.watches.get(href);
    if (watch === undefined) {
      let starting = this.pending.get(href);
      if (starting === undefined) {
        starting = this.start(href);
        this.pending.set(href, starting);
        starting.then(
          () => this.pending.delete(href),
          () => this.pending.delete(href),
        );
      }
      watch = await starting;
    }
    watch.count += 1;
    watch.listeners.add(listener);
    let released = false;
    const current = watch;
    return {
      uri: href,
      release: () => {
        if (released) return;
        released = true;
        current.listeners.delete(listener);
        current.count -= 1;
        if (current.count === 0 && this.watches.get(href) === current) {
          this.watches.delete(href);
          current.stop();
        }
      },
    };
  }

  /** Starts list-change listening on first use; returns the release function. */
  async retainList(listener: () => void): Promise<() => void> {
    this.listListeners.add(listener);
    if (this.listStops.length === 0 && this.listListeners.size === 1) {
      this.listStarting ??= this.startList().finally(() => (this.listStarting = undefined));
    }
    await this.listStarting;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.listListeners.delete(listener);
      if (this.listListeners.size === 0) this.stopList();
    };
  }

  /** Stops everything (server shutdown). */
  close(): void {
    for (const channel of [...this.channels]) channel.close();
    for (const watch of this.watches.values()) watch.stop();
    this.watches.clear();
    this.listListeners.clear();
    this.stopList();
  }

  /** Whether `principal` may subscribe to `href`: access control's answer (channels ask it for each new subscriber). */
  async authorized(principal: Principal | undefined, href: string): Promise<boolean> {
    return this.registry.access.subscribable(principal, href);
  }

  /** A closed channel leaves the hub. */
  forget(channel: Channel): void {
    this.channels.delete(channel);
  }

  private async start(href: string): Promise<Watch> {
    const provider = this.registry.route(href);
    if (provider?.watch === undefined) throw new NotFoundError(href);
    const watch: Watch = { count: 0, stop: () => undefined, listeners: new Set() };
    const fire = (): void => {
      for (const listener of [...watch.listeners]) listener(href);
    };
    const stop = await (this.relay?.watch(provider, href, fire) ?? provider.watch(href, fire));
    watch.stop = stop;
    this.watches.set(href, watch);
    return watch;
  }

  private async startList(): Promise<void> {
    const stops: (() => void)[] = [];
    for (const provider of this.registry.providers()) {
      if (provider.onListChanged === undefined) continue;
      try {
        const listener = (): void => this.listChangedSoon();
        stops.push(
          await (this.relay?.listChanged(provider, listener) ?? provider.onListChanged(listener)),
        );
      } catch (error) {
        this.logger.warn(
          { err: error, root: provider.root },
          'list-change watching could not start for this source',
        );
      }
    }
    if (this.listListeners.size === 0) for (const stop of stops) stop();
    else this.listStops = stops;
  }

  private stopList(): void {
    const stops = this.listStops;
    this.listStops = [];
    for (const stop of stops) stop();
    if (this.listTimer !== undefined) clearTimeout(this.listTimer);
    this.listTimer = undefined;
  }

  /** Coalesces list changes: one notification after a short delay, then at most one per interval. */
  private listChangedSoon(): void {
    if (this.listTimer !== undefined) return;
    const wait = Math.max(this.delayMs, this.lastListEmit + this.intervalMs - Date.now());
    this.listTimer = setTimeout(() => {
      this.listTimer = undefined;
      this.lastListEmit = Date.now();
      for (const listener of [...this.listListeners]) listener();
    }, wait);
    this.listTimer.unref();
  }
}

/** Validates a list of subscription URIs from a client (length-capped). */
export function checkSubscriptionList(uris: unknown, limit: number): string[] {
  if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) {
    throw new InvalidArgumentError('resourceSubscriptions', 'must be an array of URI strings');
  }
  if (uris.length > limit) {
    throw new ReservoirError(
      'limit_exceeded',
      `Too many resource subscriptions in one request: ${uris.length}, the limit is ${limit}`,
      {
        data: { limit, requested: uris.length },
      },
    );
  }
  return uris as string[];
}
