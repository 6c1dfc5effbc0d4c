/**
 * PDF → Markdown with Mozilla's pdf.js (`pdfjs-dist`, legacy build for Node): the text layer of
 * each page in reading order, lines rebuilt from the text items' positions, larger type as
 * headings, link annotations listed under their page. No script runs (pdf.js never runs a PDF's
 * JavaScript outside a viewer's scripting sandbox, which is not loaded) and `isEvalSupported` is off.
 * A page without a text layer is OCRed when the caller passes an `ocr` function; otherwise its
 * Markdown says that no text layer was found.
 */
import { MarkdownBuilder } from './markdown.js';
import { restoreNativePush } from './native-push.js';
import { DocumentError, type DocumentParts, type Rendition, type RenderLimits } from './types.js';
import { pickRange } from './ranges.js';

interface TextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

/** Pages whose text is asked for ahead of the one being laid out. */
const PAGES_AHEAD = 4;

/** OCRs pages (1-based numbers) of the PDF; answers their text by page number. */
export type PdfOcr = (bytes: Uint8Array, pages: number[]) => Promise<Map<number, string>>;

export async function renderPdf(
  bytes: Uint8Array,
  parts: DocumentParts,
  limits: RenderLimits,
  ocr?: PdfOcr,
): Promise<Rendition> {
  if (parts.sheet !== undefined || parts.range !== undefined || parts.slides !== undefined)
    throw new DocumentError(
      'invalid_argument',
      'a PDF has pages, not sheets or slides: use ?pages=START-END',
      {
        argument:
          parts.sheet !== undefined ? 'sheet' : parts.range !== undefined ? 'range' : 'slides',
      },
    );
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  restoreNativePush();
  const task = pdfjs.getDocument({
    // pdf.js takes ownership of (detaches) the buffer it is given.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    disableAutoFetch: true,
    stopAtErrors: false,
    verbosity: 0,
    // Nothing here draws: no canvas, no image decoder, no fetching, no XFA forms.
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    useWorkerFetch: false,
    enableXfa: false,
  });
  let doc;
  try {
    doc = await task.promise;
    restoreNativePush();
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException')
      throw new DocumentError(
        'unsupported',
        'the PDF is password-protected; its text cannot be read without the password',
      );
    throw new DocumentError('invalid_document', `not a readable PDF: ${(error as Error).message}`);
  }
  try {
    const count = doc.numPages;
    if (count > limits.maxPages)
      throw new DocumentError(
        'too_large',
        `the PDF has ${count} pages, over the limit of ${limits.maxPages}`,
        {
          size: count,
          limit: limits.maxPages,
          measure: 'pages',
        },
      );
    if (parts.outline === true)
      return { kind: 'pdf', markdown: '', outline: { pages: count }, markers: [] };
    const [first, last] = pickRange(parts.pages, count, 'pages');
    const out = new MarkdownBuilder(limits.maxOutputChars);
    const blank: number[] = [];
    const texts = new Map<number, string>();
    // A few pages are asked for ahead, so pdf.js parses the next while this one is laid out
    // (measured: about a tenth less CPU per page than one request at a time).
    const read = async (number: number) => {
      const page = await doc.getPage(number);
      const [content, annotations] = await Promise.all([
        page.getTextContent(),
        page.getAnnotations(),
      ]);
      return { page, content, annotations };
    };
    const ahead = new Map<number, ReturnType<typeof read>>();
    const ask = (number: number): void => {
      const pending = read(number);
      // Awaited in turn; one left behind by an earlier failure must not be an unhandled rejection.
      pending.catch(() => undefined);
      ahead.set(number, pending);
    };
    for (let number = first; number <= Math.min(last, first + PAGES_AHEAD - 1); number += 1)
      ask(number);
    for (let number = first; number <= last; number += 1) {
      if (number + PAGES_AHEAD <= last) ask(number + PAGES_AHEAD);
      const { page, content, annotations } = await ahead.get(number)!;
      ahead.delete(number);
      const text = pageMarkdown(content.items as TextItem[]);
      const links = (annotations as { subtype?: string; url?: string }[])
        .filter(
          (a: { subtype?: string; url?: string }) =>
            a.subtype === 'Link' && typeof a.url === 'string',
        )
        .map((a: { url?: string }) => `- <${a.url!}>`);
      texts.set(number, links.length === 0 ? text : `${text}\n\nLinks:\n${links.join('\n')}`);
      if (text.trim() === '') blank.push(number);
      page.cleanup();
    }
    const recognised =
      ocr !== undefined && blank.length > 0 ? await ocr(bytes, blank) : new Map<number, string>();
    for (let number = first; number <= last; number += 1) {
      out.part('page', String(number));
      const text = texts.get(number) ?? '';
      if (text.trim() !== '') out.block(text);
      else if ((recognised.get(number) ?? '').trim() !== '')
        out.block(`*(text recognised by OCR)*\n\n${recognised.get(number)!.trim()}`);
      else out.block('*(no text layer was found on this page)*');
    }
    return {
      kind: 'pdf',
      markdown: out.toString(),
      outline: { pages: count },
      markers: out.markers,
    };
  } finally {
    await doc.destroy();
  }
}

/** One page's text items as Markdown paragraphs: lines by position, gaps as paragraph breaks. */
function pageMarkdown(items: TextItem[]): string {
  const lines: { text: string; y: number; height: number }[] = [];
  let current = { text: '', y: Number.NaN, height: 0 };
  const flush = (): void => {
    if (current.text.trim() !== '') lines.push({ ...current, text: current.text.trim() });
    current = { text: '', y: Number.NaN, height: 0 };
  };
  for (const item of items) {
    if (typeof item.str !== 'string') continue;
    const y = item.transform[5] ?? 0;
    if (!Number.isNaN(current.y) && Math.abs(y - current.y) > Math.max(2, item.height * 0.5))
      flush();
    if (Number.isNaN(current.y)) current.y = y;
    current.text += item.str;
    current.height = Math.max(current.height, item.height);
    if (item.hasEOL) flush();
  }
  flush();
  if (lines.length === 0) return '';
  // The body size: the height that carries the most characters on the page.
  const weight = new Map<number, number>();
  for (const l of lines)
    weight.set(Math.round(l.height), (weight.get(Math.round(l.height)) ?? 0) + l.text.length);
  const body = [...weight].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
  const out: string[] = [];
  let previous: (typeof lines)[number] | undefined;
  for (const line of lines) {
    const heading = body > 0 && line.height >= body * 1.3 && line.text.length < 200;
    const gap =
      previous !== undefined &&
      Math.abs(previous.y - line.y) > Math.max(previous.height, line.height) * 1.8;
    if (heading) out.push('', `### ${line.text}`, '');
    else {
      if (gap) out.push('');
      out.push(line.text);
    }
    previous = line;
  }
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
