/**
 * 2025-era session records in Redis, so a session opened on one member is served by any: one
 * string key per session (`session:<id>`, JSON, expiring after the idle time, renewed on every
 * request), one sorted set per quota key (`sessions:<quota>`, session ids scored by expiry) for the
 * per-principal cap across the cluster, one sorted set per quota key of the sessions whose GET
 * stream is open somewhere (`streaming:<quota>`, scored by when the mark lapses unless renewed), and
 * bus messages for sessions that changed or ended. Every command is a bounded call (redis.ts): while
 * Redis is degraded or hung it fails within the Redis timeout, and the caller goes on locally.
 */
import type { Logger } from '../core/log.js';
import type { SessionDirectory, SessionRecord } from '../http/session-directory.js';
import type { EventBus } from './bus.js';
import type { RedisLink } from './redis.js';

export class RedisSessionDirectory implements SessionDirectory {
  constructor(
    private readonly link: RedisLink,
    private readonly bus: EventBus,
    private readonly member: string,
    private readonly idleMs: number,
    private readonly logger: Logger,
  ) {}

  async created(id: string, record: SessionRecord): Promise<void> {
    try {
      await this.link.call((client) =>
        client
          .multi()
          .set(key(id), JSON.stringify(record), 'PX', this.idleMs)
          .zadd(quotaKey(record.quota), String(Date.now() + this.idleMs), id)
          .pexpire(quotaKey(record.quota), this.idleMs)
          .exec(),
      );
    } catch (error) {
      // Redis unreachable or hung: the session is served by this member alone until it returns.
      this.logger.debug({ err: error }, 'could not record a session');
    }
  }

  /** Rejects with ReservoirError('unavailable') when Redis is degraded or does not answer within its timeout. */
  async find(id: string): Promise<SessionRecord | undefined> {
    const text = await this.link.call((client) => client.get(key(id)));
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as SessionRecord;
    } catch {
      return undefined;
    }
  }

  touch(id: string, quota: string): void {
    this.link
      .call((client) => client.multi().pexpire(key(id), this.idleMs).zadd(quotaKey(quota), 'XX', String(Date.now() + this.idleMs), id).exec())
      .catch(() => undefined);
  }

  async changed(id: string, record: SessionRecord): Promise<void> {
    await this.link.call((client) => client.set(key(id), JSON.stringify(record), 'PX', this.idleMs));
    await this.bus.publish({ t: 'session', id, a: 'sync', from: this.member });
  }

  async ended(id: string): Promise<void> {
    const text = await this.link.call((client) => client.getdel(key(id)));
    if (text !== null) {
      const quota = (JSON.parse(text) as SessionRecord).quota;
      await this.link.call((client) => client.multi().zrem(quotaKey(quota), id).zrem(streamingKey(quota), id).exec());
    }
    await this.bus.publish({ t: 'session', id, a: 'end', from: this.member });
  }

  listen(handler: (id: string, action: 'sync' | 'end') => void): () => void {
    return this.bus.on((message) => {
      if (message.t === 'session' && message.from !== this.member) handler(message.id, message.a);
    });
  }

  async count(quota: string): Promise<number> {
    await this.link.call((client) => client.zremrangebyscore(quotaKey(quota), '-inf', Date.now()));
    return this.link.call((client) => client.zcard(quotaKey(quota)));
  }

  streaming(id: string, quota: string, until: number | undefined): void {
    const marks = streamingKey(quota);
    const done = this.link.call<unknown>((client) =>
      until === undefined ? client.zrem(marks, id) : client.multi().zadd(marks, String(until), id).pexpireat(marks, Math.max(until, Date.now() + this.idleMs)).exec(),
    );
    done.catch((error: unknown) => this.logger.debug({ err: error }, 'could not record whether a session streams'));
  }

  async oldest(quota: string): Promise<string | undefined> {
    const now = String(Date.now());
    // Least recently used first (scored by idle expiry); the cap bounds both sets.
    const [ids, streaming] = await Promise.all([
      this.link.call((client) => client.zrange(quotaKey(quota), '0', '-1')),
      this.link.call((client) => client.zrangebyscore(streamingKey(quota), now, '+inf')),
    ]);
    const busy = new Set(streaming);
    return ids.find((id) => !busy.has(id));
  }

  /** Bytes one session's record takes in Redis (the bench reports it). */
  async bytes(id: string): Promise<number | null> {
    return this.link.client.memory('USAGE', key(id));
  }
}

function key(id: string): string {
  return `session:${id}`;
}

function quotaKey(quota: string): string {
  return `sessions:${quota}`;
}

function streamingKey(quota: string): string {
  return `streaming:${quota}`;
}
