/**
 * CSV → a Markdown table (RFC 4180: quoted fields, doubled quotes, CRLF or LF; a leading BOM is
 * dropped). Parsed here: one linear pass, no library needed.
 */
import { MarkdownBuilder, table } from './markdown.js';
import type { Rendition, RenderLimits } from './types.js';

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i]!;
    if (quoted) {
      if (c === '"' && source[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && source[i + 1] === '\n') i += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function renderCsv(bytes: Uint8Array, limits: RenderLimits): Rendition {
  const out = new MarkdownBuilder(limits.maxOutputChars);
  out.block(table(parseCsv(new TextDecoder('utf-8').decode(bytes))));
  return { kind: 'csv', markdown: out.toString(), outline: {}, markers: out.markers };
}
