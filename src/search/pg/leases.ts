/**
 * Who feeds each source of a PostgreSQL index: the instance holding its lease — a session-level
 * advisory lock (`pg_try_advisory_lock`) on one connection of that instance, which is also the
 * connection its writes go through. No Redis is needed, and a holder's death hands its sources on
 * by itself: its connection closes, PostgreSQL releases its locks, and the next instance to try
 * (every `tickMs`) takes them over and catches the source up. An instance whose lease connection
 * fails loses all its leases at once (and its writes with them), and tries again at the next tick.
 */
import type PgNs from 'pg';
import type { Logger } from '../../core/log.js';
import type { MountLeases } from '../backend.js';
import { lockKeys } from './schema.js';

export class PgLeases implements MountLeases {
  private client: PgNs.Client | undefined;
  private readonly held = new Set<string>();
  private readonly listeners = new Set<(root: string, held: boolean) => void>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly connect: () => Promise<PgNs.Client>,
    private readonly namespace: string,
    private readonly roots: readonly string[],
    private readonly tickMs: number,
    private readonly logger: Logger,
  ) {}

  /** Takes every lease nobody holds now, then keeps trying for the others. */
  async start(): Promise<void> {
    await this.tick();
    if (!this.closed) this.timer = setInterval(() => void this.tick(), this.tickMs).unref();
  }

  holds(root: string): boolean {
    return this.held.has(root);
  }

  onChange(listener: (root: string, held: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sources whose lease this instance holds. */
  heldRoots(): string[] {
    return [...this.held];
  }

  /** The connection holding the leases, which writes go through. */
  connection(): PgNs.Client {
    if (this.client === undefined)
      throw new Error('search index: the PostgreSQL connection holding the source leases is gone');
    return this.client;
  }

  /** Tries to take the lease of each source not held. */
  tick(): Promise<void> {
    this.ticking ??= this.tryAll().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.ticking?.catch(() => undefined);
    this.listeners.clear();
    const client = this.client;
    this.client = undefined;
    this.held.clear();
    // Closing the session releases its advisory locks: the next instance takes the sources at once.
    await client?.end().catch(() => undefined);
  }

  private async tryAll(): Promise<void> {
    if (this.closed) return;
    try {
      if (this.client === undefined) {
        const client = await this.connect();
        if (this.closed) {
          await client.end();
          return;
        }
        client.on('error', (error) => this.lost(client, error));
        this.client = client;
      }
      const client = this.client;
      for (const root of this.roots) {
        if (this.held.has(root) || this.closed) continue;
        const [a, b] = lockKeys(this.namespace, root);
        const { rows } = await client.query<{ ok: boolean }>(
          'SELECT pg_try_advisory_lock($1, $2) AS ok',
          [a, b],
        );
        if (rows[0]?.ok !== true || this.client !== client) continue;
        this.held.add(root);
        this.logger.debug({ source: root }, 'search index: source lease taken');
        for (const listener of [...this.listeners]) listener(root, true);
      }
    } catch (error) {
      if (this.client !== undefined) this.lost(this.client, error);
      else
        this.logger.debug(
          { err: error },
          'search index: could not reach PostgreSQL for the source leases',
        );
    }
  }

  /** The lease connection failed: every lease it held is gone. */
  private lost(client: PgNs.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.logger.warn(
      { err: error },
      'search index: the connection holding the source leases failed; they are released',
    );
    const roots = [...this.held];
    this.held.clear();
    for (const root of roots) for (const listener of [...this.listeners]) listener(root, false);
  }
}
