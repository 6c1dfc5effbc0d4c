/**
 * Markdown building blocks every format shares: tables, escaping, part markers, and an output
 * budget that stops a conversion as soon as its Markdown would pass the limit.
 */
import { DocumentError, type PartMarker } from './types.js';

/** A Markdown table of `rows` (the first row is the header); cells are escaped and one line each. */
export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const width = Math.max(1, ...rows.map((row) => row.length));
  const line = (row: string[]): string =>
    `| ${Array.from({ length: width }, (_, i) => cell(row[i] ?? '')).join(' | ')} |`;
  const [head, ...body] = rows;
  return [line(head!), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n');
}

function cell(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>').trim();
}

/** The Markdown of one document, built part by part within an output budget. */
export class MarkdownBuilder {
  private readonly chunks: string[] = [];
  private length = 0;
  readonly markers: PartMarker[] = [];

  constructor(private readonly maxChars: number) {}

  /** Starts a part: records where it begins and writes its marker line. */
  part(kind: PartMarker['kind'], label: string, heading?: string): void {
    if (this.length > 0) this.add('\n');
    this.markers.push({ kind, label, offset: this.length });
    this.add(`<!-- ${kind} ${label} -->\n`);
    if (heading !== undefined && heading !== '') this.add(`\n## ${heading}\n`);
  }

  /** Appends a block (a paragraph, a table) followed by a blank line. */
  block(text: string): void {
    if (text.trim() === '') return;
    this.add(this.length === 0 ? `${text.trim()}\n` : `\n${text.trim()}\n`);
  }

  add(text: string): void {
    this.length += text.length;
    if (this.length > this.maxChars)
      throw new DocumentError(
        'too_large',
        `the rendition is over the limit of ${this.maxChars} characters; read one part at a time (?pages=, ?sheet=, ?slides=)`,
        { limit: this.maxChars, measure: 'rendition' },
      );
    this.chunks.push(text);
  }

  toString(): string {
    return `${this.chunks.join('').trimEnd()}\n`;
  }
}
