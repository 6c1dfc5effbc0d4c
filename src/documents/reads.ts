/**
 * The document layer of every read (a core ReadLayer, installed on the Registry by the server): a
 * read of a document — PDF, Word, Excel, CSV, PowerPoint, HTML, EPUB — from any source answers its
 * Markdown rendition as the first content item (`text/markdown`), then the original as the source
 * gave it, byte for byte. `?as=markdown` answers the rendition alone, `?as=bytes` the original
 * alone; `?pages=`, `?sheet=` (`&range=`), `?slides=` a part of the rendition. When the rendition
 * and the original together pass the response cap, the original is left out and the rendition says
 * so. Images are rendered (OCR) only on `?as=markdown`: a plain image read stays as it was.
 */
import { InvalidArgumentError, UnsupportedError } from '../core/errors.js';
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
import { documentKind } from './kinds.js';
import { splitDocumentQuery, type DocumentQuery } from './query.js';
import { documentTemplates } from './templates.js';

export class DocumentReads implements ReadLayer {
  /** Query parameters each provider's own templates name (never taken from it). */
  private readonly claimed = new WeakMap<Provider, Set<string>>();

  constructor(readonly renderer: DocumentRenderer) {}

  prepare(href: string, provider: Provider): PreparedRead {
    const query = splitDocumentQuery(href, this.claimedBy(provider));
    return {
      source: query.source,
      finish: (result, ctx, maxBytes) => this.finish(href, query, result, ctx, maxBytes),
    };
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
    const bytes =
      'blob' in content ? Buffer.from(content.blob, 'base64') : Buffer.from(content.text, 'utf8');
    const rendition = await this.renderer.render(
      bytes,
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
      const note = `\n<!-- The original (${bytes.length} bytes) is left out of this read: with the rendition it passes the response limit. Read ${withQuery(href, 'as=bytes')} for it. -->\n`;
      return { contents: [{ ...markdown, text: rendition.markdown + note }], ...ttl };
    }
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

function withQuery(href: string, pair: string): string {
  return `${href}${href.includes('?') ? '&' : '?'}${pair}`;
}
