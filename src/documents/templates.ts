/**
 * The document template added beside a source's own: for each of its plain resource templates
 * (one ending in a `{+path}`-like reserved expansion), the same with
 * `{?as,pages,sheet,range,slides}`. Their completers keep the source's (path, ref, key) and add page and
 * slide numbers and sheet names, read from the document's outline — through the registry, so
 * access rules apply — and cached with its renditions.
 */
import type { RegistryRead } from '../core/read-layer.js';
import type {
  CallContext,
  Completer,
  Completion,
  Provider,
  ResourceTemplate,
} from '../core/types.js';
import type { DocumentRenderer } from './index.js';
import type { DocumentOutline } from './types.js';

const PLAIN = /\{\+(\w+)\}(\{\?[^}]*\})?$/;

export function documentTemplates(
  provider: Provider,
  read: RegistryRead,
  renderer: DocumentRenderer,
): ResourceTemplate[] {
  const bases = new Map<string, ResourceTemplate>();
  for (const template of provider.templates?.() ?? []) {
    if (template.mimeType !== undefined || !PLAIN.test(template.uriTemplate)) continue;
    const base = template.uriTemplate.replace(/\{\?[^}]*\}$/, '');
    // Named after (and completing like) the query-less template of that base, when there is one.
    if (!bases.has(base) || template.uriTemplate === base) bases.set(base, template);
  }
  const added: ResourceTemplate[] = [];
  for (const [base, template] of bases) {
    const outline = async (
      context: Record<string, string>,
      ctx: CallContext,
    ): Promise<DocumentOutline | undefined> => {
      const uri = expand(base, context);
      if (uri === undefined) return undefined;
      try {
        const original = (await read(`${uri}${uri.includes('?') ? '&' : '?'}as=bytes`, ctx))
          .contents[0];
        if (original === undefined) return undefined;
        const bytes =
          'blob' in original
            ? Buffer.from(original.blob, 'base64')
            : Buffer.from(original.text, 'utf8');
        if (!renderer.handles(original.mimeType, original.uri)) return undefined;
        return (
          await renderer.render(
            bytes,
            original.mimeType,
            original.uri,
            { outline: true },
            ctx.signal,
          )
        ).outline;
      } catch {
        return undefined; // nothing to offer for a missing, refused or unreadable document
      }
    };
    const numbers =
      (which: 'pages' | 'slides'): Completer =>
      async (value, context, ctx) =>
        numberValues((await outline(context, ctx))?.[which], value);
    const sheets: Completer = async (value, context, ctx) => {
      const names = (await outline(context, ctx))?.sheets ?? [];
      const values = names.filter((n) => n.toLowerCase().startsWith(value.toLowerCase()));
      return { values, total: values.length, hasMore: false };
    };
    added.push({
      uriTemplate: `${base}{?as,pages,sheet,range,slides}`,
      name: `${template.name}-document`,
      title: 'A document as Markdown, whole or in parts',
      description:
        'PDF, DOCX, XLSX, CSV, PPTX, HTML and EPUB read as Markdown (the first content item of a plain read). ' +
        'as=markdown: the rendition alone (images by OCR); as=bytes: the original alone, byte for byte. ' +
        'pages=START-END of a PDF, sheet=NAME (and range=A1:D20) of a workbook, slides=START-END of a deck: ' +
        '1-based and inclusive; START- runs to the end. A part out of range is an invalid argument naming the valid range.',
      mimeType: 'text/markdown',
      complete: {
        ...(template.complete ?? {}),
        as: (value) => listed(['markdown', 'bytes'], value),
        pages: numbers('pages'),
        sheet: sheets,
        slides: numbers('slides'),
      },
    });
  }
  return added;
}

/** `1-N` then each number, those starting with what was typed. */
function numberValues(count: number | undefined, value: string): Completion {
  if (count === undefined || count === 0) return { values: [], total: 0, hasMore: false };
  const all = [
    `1-${count}`,
    ...Array.from({ length: Math.min(count, 1000) }, (_, i) => String(i + 1)),
  ];
  return listed(all, value, count + 1);
}

function listed(all: string[], value: string, total?: number): Completion {
  const values = all.filter((v) => v.startsWith(value));
  const complete = total === undefined || value !== '' ? values.length : total;
  return { values: values.slice(0, 100), total: complete, hasMore: complete > 100 };
}

/** The template `base` with the context's values in its expressions, or undefined when one is missing. */
function expand(base: string, context: Record<string, string>): string | undefined {
  let missing = false;
  const uri = base.replace(/\{(\+?)(\w+)\}/g, (_whole, reserved: string, name: string) => {
    const value = context[name];
    if (value === undefined || value === '') {
      missing = true;
      return '';
    }
    return reserved === '+'
      ? encodeURI(value).replace(/[?#]/g, encodeURIComponent)
      : encodeURIComponent(value);
  });
  return missing ? undefined : uri;
}
