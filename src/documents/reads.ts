/**
 * The document layer of every read (a core ReadLayer, installed on the Registry by the server): a
 * read of a document — PDF, Word, Excel, CSV, PowerPoint, HTML, EPUB — from any source answers its
 * Markdown rendition as the first content item (`text/markdown`), then the original as the source
 * gave it, byte for byte. `?as=markdown` answers the rendition alone, `?as=bytes` the original
 * alone; `?pages=`, `?sheet=` (`&range=`), `?slides=` a part of the rendition. When the rendition
 * and the original together pass the response cap, the original is left out and the rendition says
 * so. Images are rendered (OCR) only on `?as=markdown`: a plain image read stays as it was.
 */
import {
  InvalidArgumentError,
  TooLargeError,
  UnsupportedError,
  type PartialReads,
} from '../core/errors.js';
import { LRUCache } from 'lru-cache';
import type { PreparedRead, ReadLayer, RegistryRead } from '../core/read-layer.js';
import { checkReadSize } from '../core/read-size.js';
import type {
  CallContext,
  Provider,
  ReadResult,
  ResourceContents,
  ResourceTemplate,
} from '../core/types.js';
import type { DocumentRenderer } from './index.js';
import { contentsHash } from './cache.js';
import { documentKind } from './kinds.js';
import { splitDocumentQuery, type DocumentQuery } from './query.js';
import { documentTemplates } from './templates.js';

export class DocumentReads implements ReadLayer {
  /** Query parameters each provider's own templates name (never taken from it). */
  private readonly claimed = new WeakMap<Provider, Set<string>>();
  /** Content hashes by URI and source version (see hashOf). */
  private readonly hashes = new LRUCache<string, string>({ max: 16_384 });

  constructor(readonly renderer: DocumentRenderer) {}

  prepare(href: string, provider: Provider): PreparedRead {
    const query = splitDocumentQuery(href, this.claimedBy(provider));
    const prepared: PreparedRead = {
      source: query.source,
      finish: (result, ctx, maxBytes) => this.finish(href, query, result, ctx, maxBytes),
    };
    if (this.rendersWhole(query)) {
      const cap = this.renderer.maxDocumentBytes;
      prepared.renderMaxBytes = cap;
      prepared.explain = (error) => overDocumentCap(error, cap);
    }
    return prepared;
  }

  templates(provider: Provider, read: RegistryRead): ResourceTemplate[] {
    return documentTemplates(provider, read, this.renderer);
  }

  /** Documents other than images: a plain read answers their rendition first (images need `?as=markdown`). */
  renders(mimeType: string | undefined, uri: string): boolean {
    const kind = documentKind(mimeType, uri);
    return kind !== undefined && kind !== 'image';
  }

  close(): Promise<void> {
    return this.renderer.close();
  }

  private async finish(
    href: string,
    query: DocumentQuery,
    result: ReadResult,
    ctx: CallContext,
    maxBytes: number,
  ): Promise<ReadResult> {
    if (query.as === 'bytes') return result;
    const content = result.contents.length === 1 ? result.contents[0]! : undefined;
    const kind = content === undefined ? undefined : documentKind(content.mimeType, content.uri);
    if (content === undefined || kind === undefined || (kind === 'image' && !query.given)) {
      if (!query.given) return result;
      // A text file asked for as Markdown is already text the model can read.
      if (
        query.as === 'markdown' &&
        Object.keys(query.parts).length === 0 &&
        content !== undefined &&
        'text' in content
      )
        return result;
      const what = content?.mimeType ?? 'this resource';
      if (Object.keys(query.parts).length > 0)
        throw new InvalidArgumentError(
          'uri',
          `pages, sheets and slides apply to documents; ${what} is not one`,
          { uri: href },
        );
      throw new UnsupportedError(
        href,
        `${what} is not a document type Reservoir converts to Markdown`,
      );
    }
    // The hash is all a cached rendition needs: the bytes are decoded only to convert.
    const rendition = await this.renderer.renderHashed(
      this.hashOf(content, result.version),
      () =>
        'blob' in content ? Buffer.from(content.blob, 'base64') : Buffer.from(content.text, 'utf8'),
      content.mimeType,
      content.uri,
      query.parts,
      ctx.signal,
    );
    const markdown: ResourceContents = {
      uri: href,
      mimeType: 'text/markdown',
      text: rendition.markdown,
    };
    const ttl = result.ttlMs === undefined ? {} : { ttlMs: result.ttlMs };
    if (query.given) return { contents: [markdown], ...ttl };
    const both = { contents: [markdown, content], ...ttl };
    try {
      checkReadSize(both, href, maxBytes);
      return both;
    } catch {
      const note = `\n<!-- ${leftOut(href, query.source, content, maxBytes)} -->\n`;
      return { contents: [{ ...markdown, text: rendition.markdown + note }], ...ttl };
    }
  }

  /**
   * The content hash of what the source answered: remembered by the source's version id of it (a
   * file's inode, size and times; a git blob id), so reading an unchanged document again finds its
   * rendition without hashing its bytes.
   */
  private hashOf(content: ResourceContents, version: string | undefined): string {
    if (version === undefined) return contentsHash(content);
    const key = `${content.uri}\0${version}`;
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = contentsHash(content);
      this.hashes.set(key, hash);
    }
    return hash;
  }

  /**
   * Whether this read converts the whole resource (so the source may read it past its own cap, up
   * to the document cap): a document by its name, read plainly or as Markdown, with no source
   * parameter left (a `?bytes=` range is the source's, sent as it is).
   */
  private rendersWhole(query: DocumentQuery): boolean {
    if (query.as === 'bytes' || query.source.includes('?')) return false;
    const kind = documentKind(undefined, query.source);
    return kind !== undefined && (kind !== 'image' || query.given);
  }

  private claimedBy(provider: Provider): Set<string> {
    let names = this.claimed.get(provider);
    if (names === undefined) {
      names = new Set();
      for (const template of provider.templates?.() ?? [])
        for (const expression of template.uriTemplate.matchAll(/\{[?&]([^}]*)\}/g))
          for (const name of expression[1]!.split(',')) names.add(name.replace(/\*$|:\d+$/, ''));
      this.claimed.set(provider, names);
    }
    return names;
  }
}

/**
 * A source's refusal of a document over the document cap, said as such: the rendition cannot be
 * made, and the original can still be read in ranges (the advice the source gave).
 */
function overDocumentCap(error: unknown, cap: number): unknown {
  if (!(error instanceof TooLargeError) || error.data['limit'] !== cap) return error;
  const uri = String(error.data['uri']);
  const size = Number(error.data['size']);
  const parts = error.data['parts'] as PartialReads | undefined;
  const refusal = new TooLargeError(uri, size, cap, 'document', parts);
  const advice = /\. Read it in parts .*$/s.exec(error.message)?.[0] ?? '';
  refusal.message = `Document too large to convert to Markdown: ${uri} is ${size} bytes, over the limit of ${cap} bytes for documents read as Markdown (their rendition is sent, so the source's read cap does not apply, this one does)${advice}`;
  return refusal;
}

/** Why a plain read leaves the original out, and how to read it. */
function leftOut(
  href: string,
  source: string,
  content: ResourceContents,
  maxBytes: number,
): string {
  const size =
    'blob' in content ? Buffer.byteLength(content.blob, 'base64') : Buffer.byteLength(content.text);
  try {
    checkReadSize({ contents: [content] }, href, maxBytes);
    return `The original (${size} bytes) is left out of this read: with the rendition it passes the response limit. Read ${withQuery(href, 'as=bytes')} for it.`;
  } catch {
    // Larger than any one answer: only ranges reach it (files, git and S3 offer them).
    const range = Math.max(1, Math.floor((maxBytes - 64 * 1024) / 4) * 3);
    return `The original (${size} bytes) is left out of this read: it passes the response limit of ${maxBytes} bytes. Where the source offers byte ranges, read it in parts, e.g. ${source}?bytes=0-${range - 1}.`;
  }
}

function withQuery(href: string, pair: string): string {
  return `${href}${href.includes('?') ? '&' : '?'}${pair}`;
}
