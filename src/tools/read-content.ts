/**
 * What `read_resource` gives the model for the contents of a read. Agent frameworks hand the model
 * the `text` blocks of a tool result (and images), and little else: LangChain's adapters put an
 * embedded `resource` block in the artifact the model never sees, Mastra keeps only the text, the
 * AI SDK turns any other block into its JSON. So every content becomes blocks a model can use:
 *
 * - text: the text itself, in a `text` block, with a `resource_link` naming it (never an embedded
 *   copy as well, which would double what the read costs on the wire and in the context);
 * - an image a model can look at (PNG, JPEG, GIF, WebP): an `image` block, after a line saying what
 *   it is; audio: an `audio` block likewise;
 * - any other binary: a line saying what it is (type, size) and how to read it as text (a
 *   Markdown rendition for documents, byte ranges otherwise), beside the embedded `resource`
 *   block holding its bytes for hosts that save or attach them.
 *
 * Every block is bounded by the read cap the registry applied to the read.
 */
import type { ContentBlock, ResourceContents } from '../core/types.js';
import { definedProps } from '../core/defined.js';

/** The image types model APIs take as images; other `image/*` (SVG, TIFF, …) stay resources. */
const MODEL_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Document types a Markdown rendition (`?as=markdown`) exists for. */
const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/epub+zip',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/rtf',
]);

/** The first byte range suggested for a binary read in parts. */
const SUGGESTED_BYTES = '0-65535';

/** The blocks a model reads for the contents of one read, in order. */
export function modelBlocks(contents: readonly ResourceContents[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const content of contents) {
    if ('text' in content) {
      blocks.push({
        type: 'text',
        text:
          content.text === ''
            ? `${content.uri} is empty (0 bytes of ${typeOf(content)}).`
            : content.text,
      });
      blocks.push(linkTo(content, Buffer.byteLength(content.text, 'utf8')));
      continue;
    }
    const size = base64Bytes(content.blob);
    const type = essence(content.mimeType);
    if (type !== undefined && MODEL_IMAGE_TYPES.has(type)) {
      blocks.push({ type: 'text', text: `${content.uri} is an image (${type}, ${size} bytes).` });
      blocks.push({ type: 'image', data: content.blob, mimeType: type });
    } else if (type?.startsWith('audio/') === true) {
      blocks.push({ type: 'text', text: `${content.uri} is audio (${type}, ${size} bytes).` });
      blocks.push({ type: 'audio', data: content.blob, mimeType: type });
    } else {
      blocks.push({ type: 'text', text: binaryNote(content.uri, type, size) });
      blocks.push({ type: 'resource', resource: content });
    }
  }
  return blocks;
}

/** The line telling the model what a binary is and how to read it as text. */
export function binaryNote(uri: string, type: string | undefined, size: number): string {
  const head = `${uri} is binary (${type ?? 'unknown type'}, ${size} bytes), so it is not shown as text; its bytes are in the embedded resource.`;
  const url = safeUrl(uri);
  if (url === undefined) return head;
  const join = url.search === '' ? '?' : '&';
  const ranges = `read it in byte ranges with read_resource on ${uri}${join}bytes=${SUGGESTED_BYTES} (bytes=START-END, 0-based and inclusive), where its source serves ranges`;
  if (type !== undefined && DOCUMENT_TYPES.has(type))
    return `${head} To read it as text, call read_resource with the URI ${uri}${join}as=markdown (a Markdown rendition of the document), or ${ranges}.`;
  return `${head} To inspect it, ${ranges}.`;
}

/** Decoded size of a base64 string, without decoding it. */
export function base64Bytes(blob: string): number {
  let padding = 0;
  if (blob.endsWith('==')) padding = 2;
  else if (blob.endsWith('=')) padding = 1;
  return Math.max(0, Math.floor((blob.length * 3) / 4) - padding);
}

function linkTo(content: ResourceContents, size: number): ContentBlock {
  return {
    type: 'resource_link',
    uri: content.uri,
    name: nameOf(content.uri),
    ...definedProps({ mimeType: content.mimeType }),
    size,
  };
}

/** The last path segment of a URI, decoded where that is valid; the URI itself otherwise. */
function nameOf(uri: string): string {
  const path = uri.replace(/[?#].*$/, '').replace(/\/+$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (last === '') return uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function typeOf(content: ResourceContents): string {
  return essence(content.mimeType) ?? 'text';
}

/** A MIME type without parameters, lower-cased. */
function essence(mimeType: string | undefined): string | undefined {
  const type = mimeType?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

function safeUrl(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}
