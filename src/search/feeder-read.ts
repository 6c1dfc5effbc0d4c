/** Reading one resource to index it: its indexable text and its signature, or that it went away. */
import {
  InvalidArgumentError,
  InvalidDocumentError,
  NotFoundError,
  TooLargeError,
  UnsupportedError,
} from '../core/errors.js';
import type { Provider, ResourceInfo } from '../core/types.js';
import { contentSignature, indexableText } from './document.js';
import type { FeederOptions } from './feeder-types.js';

export type ReadForIndex =
  /** Read: its text ('' when not indexable) and signature (the listed one, else its content's). */
  | { kind: 'read'; text: string; sig: string | undefined }
  /** Not read (too large, or unreadable for now): its name and path alone are indexed. */
  | { kind: 'unread'; text: string; sig: string | undefined }
  /** It no longer exists. */
  | { kind: 'gone' };

/**
 * Reads `info` through the read layer, within the caps. `extra` is text the provider adds to it (a
 * named query's description), put before what it reads. A resource too large, or a document that
 * cannot be rendered (malformed, encrypted, a bomb), keeps its listed signature and is not read
 * again until it changes; one that failed otherwise is marked `unread`, to be tried again.
 */
export async function readForIndex(
  mount: Provider,
  info: ResourceInfo,
  listed: string | undefined,
  options: FeederOptions,
  signal: AbortSignal,
  extra?: string,
): Promise<ReadForIndex> {
  const cap = options.renderedMaxBytes?.(info) ?? options.maxFileBytes;
  if (typeof info.size === 'number' && info.size > cap)
    return { kind: 'unread', text: '', sig: listed };
  try {
    // Read once each: the source's cache of recent reads is left to the clients' reads.
    const ctx = { signal, readOnce: true };
    const result = await (options.read?.(mount, info.uri, ctx) ?? mount.read(info.uri, ctx));
    let text = indexableText(result.contents, options.maxFileBytes);
    if (extra !== undefined) text = text === '' ? extra : `${extra}\n${text}`;
    return { kind: 'read', text, sig: listed ?? contentSignature(text) };
  } catch (error) {
    if (error instanceof NotFoundError) return { kind: 'gone' };
    const settled =
      error instanceof TooLargeError ||
      error instanceof InvalidArgumentError ||
      error instanceof InvalidDocumentError ||
      error instanceof UnsupportedError;
    if (settled) return { kind: 'unread', text: '', sig: listed };
    options.logger.debug(
      { err: error, uri: info.uri },
      'search index: could not read a resource; indexing its name only',
    );
    return { kind: 'unread', text: '', sig: 'unread' };
  }
}

/** One resource a reconcile reads ahead: what index() needs, and its read (started already, or not). */
export interface AheadItem {
  mount: Provider;
  info: ResourceInfo;
  listed: string | undefined;
  stored: string | undefined;
  extra: string | undefined;
  read: Promise<ReadForIndex> | undefined;
}

/**
 * Most resources read ahead of the one being indexed: enough to keep every conversion worker busy
 * while a long document at the head of the line is converted (they are indexed in list order).
 */
const AHEAD_COUNT = 16;
/** Most bytes (by their listed sizes) read ahead at once; one resource is always allowed. */
const AHEAD_BYTES = 64 * 1024 * 1024;

/**
 * The resources a reconcile is about to index, in list order, each read started when it is added
 * (unless `start` declines: a resource whose content id may name a text already indexed is read, or
 * not, when its turn comes). Bounded in count and listed bytes.
 */
export class ReadAhead {
  private readonly items: AheadItem[] = [];
  private bytes = 0;

  constructor(
    private readonly start: (
      mount: Provider,
      info: ResourceInfo,
      listed: string | undefined,
      extra: string | undefined,
    ) => Promise<ReadForIndex> | undefined,
    private readonly maxCount = AHEAD_COUNT,
    private readonly maxBytes = AHEAD_BYTES,
  ) {}

  add(
    mount: Provider,
    info: ResourceInfo,
    listed: string | undefined,
    stored: string | undefined,
    extra: string | undefined,
  ): void {
    const read = this.start(mount, info, listed, extra);
    // Awaited in its turn; one left behind (the feeder closed) is no unhandled rejection meanwhile.
    read?.catch(() => undefined);
    this.items.push({ mount, info, listed, stored, extra, read });
    this.bytes += sizeOf(info);
  }

  /** Whether the oldest must be indexed before another is added. */
  get full(): boolean {
    return this.items.length >= this.maxCount || this.bytes >= this.maxBytes;
  }

  get empty(): boolean {
    return this.items.length === 0;
  }

  /** The oldest resource read ahead (call only when not empty). */
  next(): AheadItem {
    const item = this.items.shift()!;
    this.bytes -= sizeOf(item.info);
    return item;
  }
}

const sizeOf = (info: ResourceInfo): number => (typeof info.size === 'number' ? info.size : 0);
