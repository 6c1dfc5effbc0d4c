/**
 * Turning resource content into something safe to show. Markdown is rendered by `marked` and then
 * sanitised by DOMPurify (HTML profile only: no SVG or MathML, no `style`, no event handlers, links
 * limited to http(s), mailto and in-page anchors, images only from `data:`), so a resource can never
 * run script in the page. Code is highlighted by highlight.js, which escapes what it is given.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

for (const [name, language] of Object.entries({
  bash,
  css,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}

const SAFE_LINK = /^(?:https?:|mailto:|#)/i;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') ?? '';
    if (!SAFE_LINK.test(href.trim())) node.removeAttribute('href');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
    node.setAttribute('target', '_blank');
  }
  if (node.tagName === 'IMG') {
    const src = node.getAttribute('src') ?? '';
    // Nothing is loaded from another host: only images carried inside the document itself.
    if (!/^data:image\/(?:png|jpeg|gif|webp);/i.test(src)) node.removeAttribute('src');
  }
});

const marked = new Marked({ gfm: true, async: false });

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A document's rendition: what looks like markup in it is the document's own text (a spreadsheet
 * cell holding `<script>`, a PDF quoting HTML), so raw HTML is shown as text. The renderer's one
 * tag, `<br>` inside table cells, stays a line break.
 */
const renditionMarked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }) => (/^<br\s*\/?>$/i.test(text.trim()) ? '<br>' : escapeHtml(text)),
  },
});

/**
 * Markdown → sanitised HTML, as a DOM fragment ready to insert. `rendition` shows raw HTML in the
 * Markdown as text (a document's rendition); either way DOMPurify has the last word.
 */
export function markdownFragment(
  text: string,
  options: { rendition?: boolean } = {},
): DocumentFragment {
  const html = (options.rendition === true ? renditionMarked : marked).parse(text) as string;
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: [
      'style',
      'form',
      'input',
      'button',
      'textarea',
      'select',
      'iframe',
      'object',
      'embed',
    ],
    FORBID_ATTR: ['style', 'srcset', 'action', 'formaction'],
    RETURN_DOM_FRAGMENT: true,
  });
}

// A map: the extension is a file's, and an object's lookup would find `constructor` or `toString`
// on its prototype (`x.constructor` was once taken for code and failed to preview).
const EXTENSIONS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    js: 'javascript',
    mjs: 'javascript',
    cjs: 'javascript',
    jsx: 'javascript',
    ts: 'typescript',
    tsx: 'typescript',
    mts: 'typescript',
    py: 'python',
    rs: 'rust',
    go: 'go',
    java: 'java',
    sh: 'bash',
    bash: 'bash',
    css: 'css',
    html: 'xml',
    htm: 'xml',
    xml: 'xml',
    svg: 'xml',
    json: 'json',
    md: 'markdown',
    sql: 'sql',
    yml: 'yaml',
    yaml: 'yaml',
  }),
);

/** The highlight.js language for a file name or MIME type, if one is bundled. */
export function languageOf(name: string, mimeType = ''): string | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  const byExtension = extension === undefined ? undefined : EXTENSIONS.get(extension);
  if (byExtension !== undefined) return byExtension;
  if (/javascript/.test(mimeType)) return 'javascript';
  if (/typescript/.test(mimeType)) return 'typescript';
  if (/json/.test(mimeType)) return 'json';
  if (/x?html|xml/.test(mimeType)) return 'xml';
  if (/sql/.test(mimeType)) return 'sql';
  if (/python/.test(mimeType)) return 'python';
  return undefined;
}

/** Highlighted code as escaped HTML (highlight.js escapes every character of the input). */
export function highlighted(code: string, language: string): string {
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}

/** Decodes base64 into bytes. */
export function bytesOf(blob: string): Uint8Array<ArrayBuffer> {
  const binary = atob(blob);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** `hexdump -C`-style lines of the first bytes. */
export function hexHead(bytes: Uint8Array, limit = 512): string {
  const lines: string[] = [];
  for (let offset = 0; offset < Math.min(bytes.length, limit); offset += 16) {
    const row = bytes.subarray(offset, Math.min(offset + 16, bytes.length));
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row]
      .map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.'))
      .join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  |${ascii}|`);
  }
  return lines.join('\n');
}

/** A small CSV parser (RFC 4180 quoting), bounded to `maxRows`. */
export function parseCsv(text: string, maxRows = 500): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endRow = (): void => {
    row.push(field);
    rows.push(row);
    row = [];
    field = '';
  };
  for (let i = 0; i < text.length && rows.length < maxRows; i += 1) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      endRow();
    } else field += c;
  }
  if ((field !== '' || row.length > 0) && rows.length < maxRows) endRow();
  return rows;
}

export function formatBytes(size: number | undefined): string {
  if (size === undefined) return '';
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/** The preview kind and icon of a MIME type / name. */
export function kindOf(
  mimeType = '',
  name = '',
): 'directory' | 'markdown' | 'image' | 'json' | 'csv' | 'code' | 'text' | 'binary' {
  if (mimeType === 'inode/directory' || name.endsWith('/')) return 'directory';
  if (mimeType === 'text/markdown' || /\.(md|markdown)$/i.test(name)) return 'markdown';
  if (mimeType.startsWith('image/')) return 'image';
  if (/[/+]json$/.test(mimeType) || /\.json$/i.test(name)) return 'json';
  if (mimeType === 'text/csv' || /\.csv$/i.test(name)) return 'csv';
  if (languageOf(name, mimeType) !== undefined) return 'code';
  if (mimeType.startsWith('text/') || mimeType === '') return 'text';
  return 'binary';
}
