/**
 * One conversion, run inside the document worker (worker.ts): picks the format's renderer and
 * turns anything it throws into a RenderFailure the main thread can map to a Reservoir error.
 */
import { renderCsv } from './csv.js';
import { renderDocx } from './docx.js';
import { renderEpub } from './epub.js';
import { renderHtml } from './html.js';
import { MarkdownBuilder } from './markdown.js';
import { ocrImage, ocrPdfPages, onPath } from './ocr.js';
import { renderPdf } from './pdf.js';
import { renderPptx } from './pptx.js';
import { renderXlsx } from './xlsx.js';
import {
  DocumentError,
  type DocumentKind,
  type DocumentParts,
  type RenderFailure,
  type Rendition,
  type RenderLimits,
} from './types.js';

export async function renderInProcess(
  bytes: Uint8Array,
  kind: DocumentKind,
  parts: DocumentParts,
  limits: RenderLimits,
): Promise<Rendition> {
  if (kind !== 'pdf' && parts.pages !== undefined)
    throw new DocumentError(
      'invalid_argument',
      `pages= applies to PDFs; this is ${article(kind)}`,
      { argument: 'pages' },
    );
  if (kind !== 'pptx' && parts.slides !== undefined)
    throw new DocumentError(
      'invalid_argument',
      `slides= applies to presentations; this is ${article(kind)}`,
      {
        argument: 'slides',
      },
    );
  if (kind !== 'xlsx' && (parts.sheet !== undefined || parts.range !== undefined))
    throw new DocumentError(
      'invalid_argument',
      `sheet= and range= apply to spreadsheets; this is ${article(kind)}`,
      {
        argument: parts.sheet !== undefined ? 'sheet' : 'range',
      },
    );
  // Only the paged formats have an outline to give; the others answer an empty one without converting.
  if (parts.outline === true && kind !== 'pdf' && kind !== 'xlsx' && kind !== 'pptx')
    return { kind, markdown: '', outline: {}, markers: [] };
  switch (kind) {
    case 'pdf':
      return renderPdf(
        bytes,
        parts,
        limits,
        limits.ocr ? (pdf, pages) => ocrPdfPages(pdf, pages, limits.timeoutMs) : undefined,
      );
    case 'docx':
      return renderDocx(bytes, limits);
    case 'xlsx':
      return renderXlsx(bytes, parts, limits);
    case 'csv':
      return renderCsv(bytes, limits);
    case 'pptx':
      return renderPptx(bytes, parts, limits);
    case 'html':
      return renderHtml(bytes, limits);
    case 'epub':
      return renderEpub(bytes, limits);
    case 'image':
      return renderImage(bytes, limits);
  }
}

async function renderImage(bytes: Uint8Array, limits: RenderLimits): Promise<Rendition> {
  const out = new MarkdownBuilder(limits.maxOutputChars);
  const text = limits.ocr ? await ocrImage(bytes, limits.timeoutMs) : undefined;
  if (text === undefined)
    out.block(
      `*(no text layer was found: this is an image${limits.ocr && !onPath('tesseract') ? ', and OCR is not available (install tesseract-ocr)' : ''})*`,
    );
  else if (text === '') out.block('*(no text was recognised in this image)*');
  else out.block(`*(text recognised by OCR)*\n\n${text}`);
  return { kind: 'image', markdown: out.toString(), outline: {}, markers: out.markers };
}

/** What a failed conversion reports across the worker boundary. */
export function failureOf(error: unknown): RenderFailure {
  if (error instanceof DocumentError) return error.failure;
  return {
    kind: 'invalid_document',
    message: `the document could not be converted: ${(error as Error)?.message ?? String(error)}`,
  };
}

function article(kind: DocumentKind): string {
  const names: Record<DocumentKind, string> = {
    pdf: 'a PDF',
    docx: 'a Word document',
    xlsx: 'a spreadsheet',
    csv: 'a CSV table',
    pptx: 'a presentation',
    html: 'an HTML page',
    epub: 'an EPUB book',
    image: 'an image',
  };
  return names[kind];
}
