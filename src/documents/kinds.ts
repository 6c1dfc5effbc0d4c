/**
 * Which document kind a resource is: by its MIME type first, then by its name, then (for generic
 * binary types) by its first bytes. Kept free of the libraries, so deciding costs nothing.
 */
import type { DocumentKind } from './types.js';

// The tables are maps: a type comes from a source (an HTTP server's Content-Type, an object's
// metadata) and an extension from a name, and an object's lookup would find `constructor` or
// `__proto__` on its prototype (a file `x.__proto__` was taken for a document; reading it ended
// the server).

const BY_MIME: ReadonlyMap<string, DocumentKind> = new Map(
  Object.entries({
    'application/pdf': 'pdf',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
    'text/csv': 'csv',
    'text/html': 'html',
    'application/xhtml+xml': 'html',
    'application/epub+zip': 'epub',
    'image/png': 'image',
    'image/jpeg': 'image',
    'image/tiff': 'image',
    'image/bmp': 'image',
    'image/gif': 'image',
    'image/webp': 'image',
  } satisfies Record<string, DocumentKind>),
);

const BY_EXTENSION: ReadonlyMap<string, DocumentKind> = new Map(
  Object.entries({
    pdf: 'pdf',
    docx: 'docx',
    xlsx: 'xlsx',
    xlsm: 'xlsx',
    pptx: 'pptx',
    csv: 'csv',
    html: 'html',
    htm: 'html',
    xhtml: 'html',
    epub: 'epub',
    png: 'image',
    jpg: 'image',
    jpeg: 'image',
    tif: 'image',
    tiff: 'image',
    bmp: 'image',
    gif: 'image',
    webp: 'image',
  } satisfies Record<string, DocumentKind>),
);

/** The MIME type each kind is served with when the source did not say. */
export const KIND_MIME: Record<Exclude<DocumentKind, 'image'>, string> = {
  pdf: 'application/pdf',
  docx: BY_MIME_KEY('docx'),
  xlsx: BY_MIME_KEY('xlsx'),
  pptx: BY_MIME_KEY('pptx'),
  csv: 'text/csv',
  html: 'text/html',
  epub: 'application/epub+zip',
};

/**
 * The kind of the resource at `uri` served as `mimeType`, or undefined when it is not a document.
 * A generic type (`application/octet-stream`, none) defers to the name's extension.
 */
export function documentKind(mimeType: string | undefined, uri: string): DocumentKind | undefined {
  const type = mimeType?.split(';')[0]?.trim().toLowerCase();
  if (type !== undefined && type !== '' && type !== 'application/octet-stream') {
    const known = BY_MIME.get(type);
    if (known !== undefined) return known;
    // A zip or a generic XML type may still be an Office document or EPUB by its name.
    if (type !== 'application/zip' && type !== 'application/xml') return undefined;
  }
  return BY_EXTENSION.get(extensionOf(uri));
}

function extensionOf(uri: string): string {
  let path = uri;
  const cut = path.search(/[?#]/);
  if (cut >= 0) path = path.slice(0, cut);
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

function BY_MIME_KEY(kind: DocumentKind): string {
  return [...BY_MIME].find(([, known]) => known === kind)![0];
}
