/**
 * The shapes of the document layer: what kinds it renders, which part of a document a read asks
 * for, and what a rendition is. Plain data only: these cross the worker boundary (structured clone).
 */

/** The document formats rendered as Markdown. */
export const DOCUMENT_KINDS = [
  'pdf',
  'docx',
  'xlsx',
  'csv',
  'pptx',
  'html',
  'epub',
  'image',
] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** An inclusive, 1-based range of pages or slides; `end` undefined runs to the last one. */
export interface NumberRange {
  start: number;
  end?: number;
}

/** The part of a document a read asks for. Empty: the whole document. */
export interface DocumentParts {
  /** PDF pages. */
  pages?: NumberRange;
  /** Spreadsheet sheet, by name. */
  sheet?: string;
  /** A cell range of that sheet (`A1:D20`); needs `sheet` unless the workbook has one sheet. */
  range?: string;
  /** Presentation slides. */
  slides?: NumberRange;
  /** Only the outline (page count, sheet names, slide count): no Markdown is produced. */
  outline?: boolean;
}

/** How a document is divided, for completion and for errors naming the valid range. */
export interface DocumentOutline {
  pages?: number;
  sheets?: string[];
  slides?: number;
  /** EPUB chapters. */
  chapters?: number;
}

/** Where a page, sheet, slide or chapter begins in the Markdown (a UTF-16 offset). */
export interface PartMarker {
  kind: 'page' | 'sheet' | 'slide' | 'chapter';
  /** The page or slide number, the sheet name, the chapter number. */
  label: string;
  offset: number;
}

/** A document as Markdown, with where each part begins. */
export interface Rendition {
  kind: DocumentKind;
  markdown: string;
  outline: DocumentOutline;
  markers: PartMarker[];
}

/** The bounds every conversion runs inside. */
export interface RenderLimits {
  /** Longest Markdown a rendition may be, in UTF-16 units. @default 8 MiB */
  maxOutputChars: number;
  /** Most bytes a zip-based document (DOCX, XLSX, PPTX, EPUB) may inflate to, all entries together. @default 256 MiB */
  maxInflatedBytes: number;
  /** Most pages a PDF may have. @default 5000 */
  maxPages: number;
  /** Time one conversion may take, ms. @default 30000 */
  timeoutMs: number;
  /** The worker's heap limit, MiB. @default 512 */
  maxHeapMb: number;
  /** Whether to run `tesseract` on images and on PDF pages without a text layer (when on PATH). @default true */
  ocr: boolean;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  maxOutputChars: 8 * 1024 * 1024,
  maxInflatedBytes: 256 * 1024 * 1024,
  maxPages: 5000,
  timeoutMs: 30_000,
  maxHeapMb: 512,
  ocr: true,
};

/** Why a conversion failed, as the worker reports it (the main thread turns it into a ReservoirError). */
export interface RenderFailure {
  kind: 'invalid_document' | 'unsupported' | 'too_large' | 'invalid_argument';
  message: string;
  data?: Record<string, unknown>;
}

/** A failure raised inside a conversion; carried across the worker boundary as a RenderFailure. */
export class DocumentError extends Error {
  readonly failure: RenderFailure;
  constructor(kind: RenderFailure['kind'], message: string, data?: Record<string, unknown>) {
    super(message);
    this.name = 'DocumentError';
    this.failure = data === undefined ? { kind, message } : { kind, message, data };
  }
}
