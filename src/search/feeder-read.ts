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
    const ctx = { signal };
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
