/**
 * One source's lease, as one member of the cluster sees it (see watch-relay.ts for the scheme):
 * renewing or taking it, running the provider's watches on the URIs someone in the cluster watches
 * while holding it, reporting a change made while nobody held it, and publishing only while the
 * lease and its fencing token are still this member's.
 */
import { createHash } from 'node:crypto';
import { NotFoundError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Provider } from '../core/types.js';
import type { BusMessage, EventBus } from './bus.js';
import type { RedisLink } from './redis.js';

/**
 * Renews or takes the lease: only while it still holds what the caller read (ARGV[1], '' for none),
 * so two members judging the same stale lease cannot both take it. Returns the fencing token (a new
 * one on a take-over), or 0 when the lease changed meanwhile.
 */
const ACQUIRE = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if ARGV[4] == '1' then return tonumber(redis.call('GET', KEYS[2]) or '0') end
return redis.call('INCR', KEYS[2])`;

/** Publishes (and records what the holder last saw of the URI, when given) only while the lease (held by ARGV[1], a `<member>\n` prefix) and token are the caller's. */
const FENCED_PUBLISH = `
if string.sub(redis.call('GET', KEYS[1]) or '', 1, #ARGV[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[2] then
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
  return redis.call('PUBLISH', ARGV[3], ARGV[4])
end
return -1`;

const RELEASE = `if string.sub(redis.call('GET', KEYS[1]) or '', 1, #ARGV[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** The Redis hash of what was last seen of each watched URI of `provider` (by its holders, or first by a subscriber). */
export function seenKeyOf(provider: Provider): string {
  return `seen:${provider.root}`;
}

/** A digest of what `href` reads now (`missing` when it does not exist); undefined when it cannot be read. */
export async function digestOf(provider: Provider, href: string): Promise<string | undefined> {
  try {
    const { contents } = await provider.read(href, { signal: AbortSignal.timeout(10_000) });
    return createHash('sha256').update(JSON.stringify(contents)).digest('base64url');
  } catch (error) {
    return error instanceof NotFoundError ? 'missing' : undefined;
  }
}

/** What a source's lease needs of the member holding it (ClusterWatches). */
export interface LeaseHub {
  readonly link: RedisLink;
  readonly bus: EventBus;
  readonly member: string;
  readonly logger: Logger;
  readonly leaseMs: number;
  /** Hand-overs this member won, and changes it published as holder that were fenced out. */
  acquired: number;
  fencedOut: number;
  /** Records interest in `hrefs` for the holder; `nudge` has it look now rather than at its next tick. */
  declare(source: SourceLease, hrefs: string[], nudge?: boolean): Promise<void>;
  /** The lease value this member writes for the lease `tag`. */
  leaseValue(tag: string): string;
  /** Who holds the lease `value` found under `tag`: undefined when it does not verify. */
  leaseHolder(tag: string, value: string): string | undefined;
}

/** One source's lease, as seen by this member; the provider watches it runs while holding it. */
export class SourceLease {
  token = 0;
  readonly local = new Set<string>();
  readonly leaseKey: string;
  readonly tokenKey: string;
  readonly interestKey: string;
  readonly seenKey: string;
  /** What the lease's seal is bound to: its key, with the cluster's prefix. */
  readonly leaseTag: string;
  private readonly running = new Map<string, () => void>();
  private listStop: (() => void) | undefined;
  /** Released or abandoned: no tick starts anything any more. */
  private ended = false;
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly hub: LeaseHub,
    readonly provider: Provider,
  ) {
    this.leaseKey = `lease:${provider.root}`;
    this.tokenKey = `lease-token:${provider.root}`;
    this.interestKey = `interest:${provider.root}`;
    this.seenKey = seenKeyOf(provider);
    this.leaseTag = `lease:${hub.link.prefix}${this.leaseKey}`;
  }

  /** Renews this member's lease, or takes one that is free, expired or does not verify; the fencing token, or 0. */
  private async acquire(): Promise<number> {
    const { link } = this.hub;
    const current = await link.call((client) => client.get(this.leaseKey));
    const holder = current === null ? undefined : this.hub.leaseHolder(this.leaseTag, current);
    const mine = holder === this.hub.member;
    if (holder !== undefined && !mine) return 0;
    const value = this.hub.leaseValue(this.leaseTag);
    return Number(
      await link.call((client) =>
        client.eval(
          ACQUIRE,
          2,
          this.leaseKey,
          this.tokenKey,
          current ?? '',
          value,
          String(this.hub.leaseMs),
          mine && this.token > 0 ? '1' : '0',
        ),
      ),
    );
  }

  async tick(): Promise<void> {
    let token: number;
    try {
      await this.hub.declare(this, [...this.local]);
      token = await this.acquire();
    } catch {
      token = 0; // Redis unreachable or hung: a holder that cannot renew stops before its lease runs out elsewhere.
    }
    // Released or abandoned while this tick was in flight: it starts nothing.
    if (this.ended) return;
    if (token === 0) {
      if (this.token > 0)
        this.hub.logger.info(
          { source: this.provider.root },
          'no longer polling this source: another instance holds its lease',
        );
      this.stopAll();
      this.token = 0;
      return;
    }
    if (token !== this.token) {
      this.stopAll();
      this.token = token;
      this.hub.acquired += 1;
      this.hub.logger.info(
        { source: this.provider.root, token },
        'polling this source for the cluster (lease taken)',
      );
      this.startList();
    }
    await this.sync();
  }

  /** Runs the provider's watch on exactly the URIs someone in the cluster watches. */
  sync(): Promise<void> {
    this.syncing ??= (async () => {
      try {
        const { link } = this.hub;
        const now = Date.now();
        await link.call((client) => client.zremrangebyscore(this.interestKey, '-inf', now));
        const wanted = new Set(
          await link.call((client) => client.zrange(this.interestKey, '0', '-1')),
        );
        if (this.token === 0) return;
        for (const [href, stop] of this.running) {
          if (!wanted.has(href)) {
            this.running.delete(href);
            stop();
          }
        }
        for (const href of wanted) if (!this.running.has(href)) await this.start(href);
      } catch (error) {
        this.hub.logger.debug(
          { err: error, source: this.provider.root },
          'could not read the watch interest',
        );
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  abandon(): void {
    this.ended = true;
    this.stopAll();
    this.token = 0;
  }

  async release(): Promise<void> {
    this.ended = true;
    this.stopAll();
    if (this.token === 0) return;
    this.token = 0;
    try {
      await this.hub.link.call((client) =>
        client.eval(RELEASE, 1, this.leaseKey, `${this.hub.member}\n`),
      );
    } catch {
      // It expires by itself.
    }
  }

  private async start(href: string): Promise<void> {
    const token = this.token;
    this.running.set(href, () => undefined);
    try {
      const stop = await this.provider.watch!(href, () => void this.changed(href, token));
      if (!this.running.has(href) || this.token !== token) {
        stop();
        return;
      }
      this.running.set(href, stop);
      // The watch took its own baseline: a change since the last holder's last report shows here.
      const { link } = this.hub;
      const [digest, seen] = await Promise.all([
        this.digest(href),
        link.call((client) => client.hget(this.seenKey, href)),
      ]);
      if (digest === undefined) return;
      if (seen === null) await link.call((client) => client.hset(this.seenKey, href, digest));
      else if (seen !== digest)
        await this.publish(
          { t: 'updated', uri: href, root: this.provider.root, f: token },
          href,
          digest,
        );
    } catch (error) {
      this.running.delete(href);
      this.hub.logger.debug(
        { err: error, uri: href },
        'the lease holder could not watch a resource',
      );
    }
  }

  /** The provider reported a settled change: record what it is now, and publish. */
  private async changed(href: string, token: number): Promise<void> {
    const digest = await this.digest(href);
    await this.publish(
      { t: 'updated', uri: href, root: this.provider.root, f: token },
      href,
      digest,
    );
  }

  private digest(href: string): Promise<string | undefined> {
    return digestOf(this.provider, href);
  }

  private startList(): void {
    if (this.provider.onListChanged === undefined) return;
    const token = this.token;
    void Promise.resolve(
      this.provider.onListChanged(
        () => void this.publish({ t: 'list', root: this.provider.root, f: token }),
      ),
    )
      .then((stop) => {
        if (this.token === token && this.listStop === undefined) this.listStop = stop;
        else stop();
      })
      .catch((error: unknown) =>
        this.hub.logger.debug({ err: error }, 'the lease holder could not listen to list changes'),
      );
  }

  /** Publishes only while this member's lease and token are current (fencing), recording `digest` as last seen of `href`. */
  private async publish(
    message: BusMessage & { f: number },
    href = '',
    digest?: string,
  ): Promise<void> {
    try {
      const result = Number(
        await this.hub.link.call((client) =>
          client.eval(
            FENCED_PUBLISH,
            3,
            this.leaseKey,
            this.tokenKey,
            this.seenKey,
            `${this.hub.member}\n`,
            String(message.f),
            this.hub.bus.name,
            this.hub.bus.sealed(message),
            digest === undefined ? '' : href,
            digest ?? '',
          ),
        ),
      );
      if (result < 0) this.hub.fencedOut += 1;
      else this.hub.bus.published += 1;
    } catch (error) {
      this.hub.logger.debug({ err: error }, 'could not publish a change on the cluster bus');
    }
  }

  private stopAll(): void {
    for (const stop of this.running.values()) stop();
    this.running.clear();
    this.listStop?.();
    this.listStop = undefined;
  }
}
