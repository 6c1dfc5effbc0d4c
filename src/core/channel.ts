/**
 * A delivery route for change notifications — a 2025 session, a stdio connection, the HTTP listen
 * bus (see subscriptions.ts). It counts its own subscribers per URI (several listen streams may
 * share a URI) and holds one hub retain per URI, so each change reaches each route exactly once;
 * closing it releases everything it held.
 */
import { NotFoundError, ReservoirError } from './errors.js';
import type { Principal } from './principal.js';
import { parseUri } from './uri.js';

/** Where a channel's notifications go. */
export interface Delivery {
  updated(uri: string): void;
  listChanged(): void;
  promptsChanged?(): void;
  toolsChanged?(): void;
}

/** What a channel needs of the hub that counts watches for every route (`Subscriptions`). */
export interface Hub {
  /** Retains a watch on `uri` for `principal`; NotFoundError for what it may not or cannot watch. */
  retain(
    uri: string,
    listener: (uri: string) => void,
    principal?: Principal,
  ): Promise<{ uri: string; release: () => void }>;
  retainList(listener: () => void): Promise<() => void>;
  /** Whether `principal` may subscribe to the normalised `href`. */
  authorized(principal: Principal | undefined, href: string): Promise<boolean>;
  forget(channel: Channel): void;
}

/** One delivery route; see the module comment. */
export class Channel {
  private readonly held = new Map<string, { count: number; release: () => void }>();
  private listRelease: (() => void) | undefined;
  private listCount = 0;
  private closed = false;
  /** Subscribes being judged per URI, and how many of them an unsubscribe sent since has undone. */
  private readonly adding = new Map<string, { count: number; undone: number }>();

  constructor(
    private readonly hub: Hub,
    private readonly delivery: Delivery,
    private readonly max: number,
  ) {}

  /** URIs this channel holds (canonical). */
  get size(): number {
    return this.held.size;
  }

  /** The URIs this channel holds (canonical). */
  uris(): string[] {
    return [...this.held.keys()];
  }

  has(uri: string): boolean {
    try {
      return this.held.has(parseUri(uri).href);
    } catch {
      return false;
    }
  }

  /**
   * Adds one subscriber of `uri`. Resolves with the canonical URI. Throws NotFoundError,
   * InvalidUriError, or a limit error when the channel already holds its maximum.
   *
   * Requests on one route apply in the order they were sent: an unsubscribe that arrives while a
   * subscribe of the same URI is still being judged undoes that subscribe when it lands (it is
   * answered, then released), and a subscribe whose held URI was released while it was being
   * judged retains it again, so what the client asked last is what the channel holds.
   */
  async add(uri: string, principal?: Principal): Promise<string> {
    if (this.closed) throw new ReservoirError('unavailable', 'The connection is closing');
    const href = parseUri(uri).href;
    const pending = this.adding.get(href) ?? { count: 0, undone: 0 };
    pending.count += 1;
    this.adding.set(href, pending);
    // Once judged, this subscribe leaves the pending ones; true when an unsubscribe undid it.
    const settle = (): boolean => {
      pending.count -= 1;
      if (pending.count === 0 && this.adding.get(href) === pending) this.adding.delete(href);
      const undone = pending.undone > 0;
      if (undone) pending.undone -= 1;
      return undone;
    };
    let retained: (() => void) | undefined;
    try {
      retained = await this.judge(uri, href, principal);
    } catch (error) {
      settle();
      throw error;
    }
    const undone = settle();
    if (this.closed) {
      retained?.();
      throw new ReservoirError('unavailable', 'The connection is closing');
    }
    const now = this.held.get(href);
    if (undone || now !== undefined) {
      retained?.();
      if (!undone && now !== undefined) now.count += 1;
      return href;
    }
    // Held when this subscribe was judged, released since: retain it again.
    if (retained === undefined) return this.add(uri, principal);
    this.held.set(href, { count: 1, release: retained });
    return href;
  }

  /**
   * Whether `principal` may subscribe to `href`, and the hub's retain when this channel does not
   * hold it yet (undefined when it does: the subscriber joins the one held).
   */
  private async judge(
    uri: string,
    href: string,
    principal: Principal | undefined,
  ): Promise<(() => void) | undefined> {
    if (this.held.has(href)) {
      // Held already for someone on this route: the new subscriber must still be allowed it.
      if (!(await this.hub.authorized(principal, href))) throw new NotFoundError(uri);
      return undefined;
    }
    if (this.held.size >= this.max) {
      throw new ReservoirError(
        'limit_exceeded',
        `Too many subscriptions: the limit is ${this.max} per connection`,
        {
          data: { limit: this.max },
        },
      );
    }
    try {
      const retained = await this.hub.retain(
        href,
        (changed) => this.delivery.updated(changed),
        principal,
      );
      return retained.release;
    } catch (error) {
      // Not found echoes the URI the client sent, as a read's does.
      if (error instanceof NotFoundError && uri !== href)
        throw new NotFoundError(uri, { cause: error });
      throw error;
    }
  }

  /** Removes one subscriber of `uri` (canonical or not); unknown URIs are ignored. */
  remove(uri: string): void {
    let href: string;
    try {
      href = parseUri(uri).href;
    } catch {
      return;
    }
    const entry = this.held.get(href);
    if (entry === undefined) {
      // A subscribe of it still being judged: this unsubscribe, sent after it, undoes it.
      const pending = this.adding.get(href);
      if (pending !== undefined && pending.undone < pending.count) pending.undone += 1;
      return;
    }
    entry.count -= 1;
    if (entry.count === 0) {
      this.held.delete(href);
      entry.release();
    }
  }

  /** Adds one listener of list changes. */
  async addList(): Promise<void> {
    this.listCount += 1;
    if (this.listCount === 1) {
      const release = await this.hub.retainList(() => this.delivery.listChanged());
      // removeList() or close() may have run while the hub was starting.
      if (this.closed || (this.listCount as number) === 0) release();
      else this.listRelease = release;
    }
  }

  removeList(): void {
    if (this.listCount === 0) return;
    this.listCount -= 1;
    if (this.listCount === 0) {
      this.listRelease?.();
      this.listRelease = undefined;
    }
  }

  /** @internal Passes a catalog change on. */
  notify(kind: 'prompts' | 'tools'): void {
    if (this.closed) return;
    if (kind === 'prompts') this.delivery.promptsChanged?.();
    else this.delivery.toolsChanged?.();
  }

  /** Releases everything this channel held. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.held.values()) entry.release();
    this.held.clear();
    this.listCount = 0;
    this.listRelease?.();
    this.listRelease = undefined;
    this.hub.forget(this);
  }
}
