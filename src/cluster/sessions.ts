/**
 * 2025-era session records in Redis, so a session opened on one member is served by any: one
 * string key per session (`session:<id>`, JSON, expiring after the idle time, renewed on every
 * request), one sorted set per quota key (`sessions:<quota>`, session ids scored by expiry) for the
 * per-principal cap across the cluster, one sorted set per quota key of the sessions whose GET
 * stream is open somewhere (`streaming:<quota>`, scored by when the mark lapses unless renewed), and
 * bus messages for sessions that changed or ended. Every command is a bounded call (redis.ts): while
 * Redis is degraded or hung it fails within the Redis timeout, and the caller goes on locally.
 *
 * A record is sealed (seal.ts) with the shared secret for its own key, so a record written by a
 * Redis client that is not a member, or moved from another session's key, is not adopted; nor is
 * one over its bounds (SESSION_RECORD_LIMITS: size, subscriptions, field lengths) or of another
 * shape, signed or not. Such a record is refused — logged, counted
 * (`reservoir_cluster_session_records_refused`) — and the session answered as not found, so the
 * client initialises a new one. A record carries no expiry of its own: its Redis expiry bounds it.
 */
import type { Logger } from '../core/log.js';
import { MAX_URI_LENGTH } from '../core/uri.js';
import { createHash } from 'node:crypto';
import type {
  SessionDirectory,
  SessionRecord,
  SubscriptionEdit,
} from '../http/session-directory.js';
import { isEditCount, type EventBus } from './bus.js';
import type { RedisLink } from './redis.js';
import { DropCounter, type Seal } from './seal.js';

/** The bounds a session record must keep to be adopted. */
export interface SessionRecordLimits {
  /** Characters of the stored record. @default 4 MiB */
  maxChars: number;
  /** Subscriptions it holds (the default per-connection cap). @default 10000 */
  maxSubscriptions: number;
  /** Characters of its owner and quota key each. @default 1024 */
  maxNameChars: number;
  /** Characters of its recorded `initialize` params, as JSON. @default 256 KiB */
  maxInitChars: number;
}

export const SESSION_RECORD_LIMITS: SessionRecordLimits = {
  maxChars: 4 * 1024 * 1024,
  maxSubscriptions: 10_000,
  maxNameChars: 1024,
  maxInitChars: 256 * 1024,
};

/**
 * Replaces a record only if it is still the one the edit was made to (its SHA-1 as read): an edit
 * made meanwhile by another member is never overwritten, the loser reads again and re-applies.
 * Answers -1 (no record), 0 (edited meanwhile), 1 (replaced), 2 (replaced, and a GET stream of the
 * session is open on some member).
 */
const SWAP_RECORD = `
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if redis.sha1hex(current) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
local streaming = redis.call('ZSCORE', KEYS[2], ARGV[4])
if streaming and tonumber(streaming) > tonumber(ARGV[5]) then return 2 end
return 1
`;

/** Tries of one edit against members editing the same record at once (each try is two round trips). */
const EDIT_TRIES = 32;

/** An edit's member waiting for the member holding the session's GET stream to follow it. */
interface FollowWaiter {
  version: number;
  settle(followed: boolean): void;
}

export class RedisSessionDirectory implements SessionDirectory {
  /** Records found in Redis that were not adopted (forged, moved, over their bounds, malformed). */
  readonly refused: DropCounter;
  /** Edits waiting for a GET stream's member to follow them, by session id. */
  private readonly waiting = new Map<string, Set<FollowWaiter>>();

  constructor(
    private readonly link: RedisLink,
    private readonly bus: EventBus,
    private readonly member: string,
    private readonly idleMs: number,
    private readonly logger: Logger,
    private readonly seal: Seal,
    private readonly limits: SessionRecordLimits = SESSION_RECORD_LIMITS,
  ) {
    this.refused = new DropCounter(
      '2025-era session records',
      (fields, text) =>
        logger.warn(
          fields,
          `${text}; their sessions are answered as not found, so clients initialise new ones`,
        ),
      10_000,
    );
    bus.on((message) => {
      if (message.t !== 'session' || message.a !== 'synced') return;
      for (const waiter of [...(this.waiting.get(message.id) ?? [])])
        if ((message.v ?? 0) >= waiter.version) waiter.settle(true);
    });
  }

  async created(id: string, record: SessionRecord): Promise<void> {
    try {
      await this.link.call((client) =>
        client
          .multi()
          .set(key(id), this.sealed(id, record), 'PX', this.idleMs)
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
    return text === null ? undefined : this.opened(id, text);
  }

  /** The record stored as `text` under session `id`, when it verifies and keeps its bounds; else refused. */
  opened(id: string, text: string): SessionRecord | undefined {
    const opened = this.seal.open(this.tag(id), text, this.limits.maxChars);
    if (!opened.ok) {
      this.refused.dropped(opened.reason);
      return undefined;
    }
    const problem = recordProblem(opened.payload, this.limits);
    if (problem !== undefined) {
      this.refused.dropped(problem);
      return undefined;
    }
    return opened.payload as SessionRecord;
  }

  touch(id: string, quota: string): void {
    this.link
      .call((client) =>
        client
          .multi()
          .pexpire(key(id), this.idleMs)
          .zadd(quotaKey(quota), 'XX', String(Date.now() + this.idleMs), id)
          .exec(),
      )
      .catch(() => undefined);
  }

  async changed(
    id: string,
    edit: SubscriptionEdit,
    followMs?: number,
  ): Promise<SessionRecord | undefined> {
    for (let tries = 0; tries < EDIT_TRIES; tries += 1) {
      const text = await this.link.call((client) => client.get(key(id)));
      const record = text === null ? undefined : this.opened(id, text);
      if (text === null || record === undefined) return undefined;
      const next = edited(record, edit, this.limits.maxSubscriptions);
      const swapped = await this.link.call((client) =>
        client.eval(
          SWAP_RECORD,
          2,
          key(id),
          streamingKey(record.quota),
          createHash('sha1').update(text).digest('hex'),
          this.sealed(id, next),
          String(this.idleMs),
          id,
          String(Date.now()),
        ),
      );
      if (swapped === -1) return undefined;
      if (swapped === 0) continue;
      const version = next.version!;
      // Listening before the word goes out: the stream's member may answer at once.
      const follow =
        swapped === 2 && followMs !== undefined ? this.follows(id, version, followMs) : undefined;
      const sent = await this.bus.publish({
        t: 'session',
        id,
        a: 'sync',
        from: this.member,
        v: version,
      });
      if (follow !== undefined) {
        if (!sent) follow.cancel();
        await follow.done;
      }
      return next;
    }
    throw new Error(
      `the record of session ${id} was edited by other members ${EDIT_TRIES} times while this one tried to edit it`,
    );
  }

  synced(id: string, version: number): void {
    void this.bus.publish({ t: 'session', id, a: 'synced', from: this.member, v: version });
  }

  /**
   * Resolves once a member says its GET stream of session `id` follows version `version` of its
   * record (true), or after `timeoutMs` without that (false); `cancel` resolves it at once (false).
   */
  private follows(
    id: string,
    version: number,
    timeoutMs: number,
  ): { done: Promise<boolean>; cancel(): void } {
    let settle!: (followed: boolean) => void;
    const done = new Promise<boolean>((resolve) => (settle = resolve));
    const waiter: FollowWaiter = { version, settle: (followed) => finish(followed) };
    let waiters = this.waiting.get(id);
    if (waiters === undefined) this.waiting.set(id, (waiters = new Set()));
    waiters.add(waiter);
    const timer = setTimeout(() => finish(false), timeoutMs);
    timer.unref();
    const finish = (followed: boolean): void => {
      clearTimeout(timer);
      const set = this.waiting.get(id);
      set?.delete(waiter);
      if (set?.size === 0) this.waiting.delete(id);
      settle(followed);
    };
    return { done, cancel: () => finish(false) };
  }

  async ended(id: string): Promise<void> {
    const text = await this.link.call((client) => client.getdel(key(id)));
    const quota = text === null ? undefined : this.opened(id, text)?.quota;
    if (quota !== undefined)
      await this.link.call((client) =>
        client.multi().zrem(quotaKey(quota), id).zrem(streamingKey(quota), id).exec(),
      );
    await this.bus.publish({ t: 'session', id, a: 'end', from: this.member });
  }

  listen(handler: (id: string, action: 'sync' | 'end', version?: number) => void): () => void {
    return this.bus.on((message) => {
      if (message.t === 'session' && message.a !== 'synced' && message.from !== this.member)
        handler(message.id, message.a, message.v);
    });
  }

  async count(quota: string): Promise<number> {
    await this.link.call((client) => client.zremrangebyscore(quotaKey(quota), '-inf', Date.now()));
    return this.link.call((client) => client.zcard(quotaKey(quota)));
  }

  streaming(id: string, quota: string, until: number | undefined): void {
    const marks = streamingKey(quota);
    const done = this.link.call<unknown>((client) =>
      until === undefined
        ? client.zrem(marks, id)
        : client
            .multi()
            .zadd(marks, String(until), id)
            .pexpireat(marks, Math.max(until, Date.now() + this.idleMs))
            .exec(),
    );
    done.catch((error: unknown) =>
      this.logger.debug({ err: error }, 'could not record whether a session streams'),
    );
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

  private sealed(id: string, record: SessionRecord): string {
    return this.seal.seal(this.tag(id), record);
  }

  /** What a record's seal is bound to: its own key, with the cluster's prefix (a record moved to another key does not verify). */
  private tag(id: string): string {
    return `session:${this.link.prefix}${key(id)}`;
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

/**
 * `record` with `edit` applied and its version bumped. Past `maxSubscriptions` (members adding at
 * once, each within its own connection's cap) the additions that do not fit are left out: a record
 * over its bounds would not be adopted at all.
 */
export function edited(
  record: SessionRecord,
  edit: SubscriptionEdit,
  maxSubscriptions: number,
): SessionRecord {
  const uris = new Set(record.subscriptions);
  for (const uri of edit.remove) uris.delete(uri);
  for (const uri of edit.add) if (uris.size < maxSubscriptions) uris.add(uri);
  return { ...record, subscriptions: [...uris].sort(), version: (record.version ?? 0) + 1 };
}

/** Why `value` is no session record within `limits`, or undefined when it is one. */
export function recordProblem(value: unknown, limits: SessionRecordLimits): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'malformed';
  const r = value as Record<string, unknown>;
  const name = (v: unknown): boolean =>
    typeof v === 'string' && v.length > 0 && v.length <= limits.maxNameChars;
  if (!name(r['owner']) || !name(r['quota'])) return 'malformed';
  const init = r['init'];
  if (typeof init !== 'object' || init === null || Array.isArray(init)) return 'malformed';
  if (JSON.stringify(init).length > limits.maxInitChars) return 'too_large';
  const version = r['version'];
  if (version !== undefined && !isEditCount(version)) return 'malformed';
  const subscriptions = r['subscriptions'];
  if (!Array.isArray(subscriptions)) return 'malformed';
  if (subscriptions.length > limits.maxSubscriptions) return 'too_many_subscriptions';
  if (
    !subscriptions.every(
      (uri) => typeof uri === 'string' && uri.length > 0 && uri.length <= MAX_URI_LENGTH,
    )
  )
    return 'malformed';
  return undefined;
}
