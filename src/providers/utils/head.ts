/**
 * What the first few KiB of a file say about it, for its listing entry: its type (sniffed, as a
 * read would serve it), a one-line `description`, and whether a tool marked it as generated.
 * The description is, in order: the front matter's `description:`, the first heading (Markdown,
 * setext, AsciiDoc, reStructuredText, an HTML `<title>` or `<h1>`), else the first line that says
 * something (comment markers, a shebang, licence and lint lines skipped); at most
 * MAX_DESCRIPTION characters.
 */
import { LOW_PRIORITY } from '../../core/hint-names.js';
import type { ResourceInfo } from '../../core/types.js';
import { contentType } from './content.js';

/** Longest description, in characters (cut at a word, with an ellipsis). */
export const MAX_DESCRIPTION = 200;
/** Lines of the head searched for a generated-file marker. */
const MARKER_LINES = 20;

export interface HeadInfo {
  mimeType: string;
  text: boolean;
  description?: string;
  /** The head carries a generated-file marker (`@generated`, `Code generated … DO NOT EDIT`). */
  generated: boolean;
}

const GENERATED =
  /@generated\b|\bcode generated\b.*\bdo not edit\b|\b(?:auto-?generated|automatically generated)\b|\bDO NOT EDIT\b/i;
const SKIPPED_LINE =
  /^(?:copyright\b|\(c\)|©|spdx-license-identifier|@license\b|eslint-|prettier-ignore|@ts-|-\*-|vim?:|use strict|'use strict'|"use strict")/i;
const COMMENT_LEAD = /^(?:\/\/+!?|\/\*+!?|\*+|#+!?|--+|;+|<!--|"""|'''|%+|rem\s)\s*/i;
const COMMENT_TAIL = /\s*(?:\*+\/|-->|"""|''')\s*$/;
const MARKDOWN = /^text\/(?:markdown|x-markdown|mdx|x-rst|asciidoc|plain)$/;

/** Sniffs and describes `head`: the first bytes of a file named `name` (`complete` when they are all of it). */
export function describeHead(name: string, head: Buffer, complete: boolean): HeadInfo {
  const { mimeType, text } = contentType(name, head, complete);
  if (!text || head.length === 0) return { mimeType, text, generated: false };
  let source = head.toString('utf8');
  if (!complete) source = source.replace(/\uFFFD+$/, ''); // a character cut at the end of the head
  if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
  const lines = source.split(/\r?\n/);
  if (!complete && lines.length > 1) lines.pop(); // the last line may be cut short
  const generated = lines.slice(0, MARKER_LINES).some((line) => GENERATED.test(line));
  const found = frontMatter(lines) ?? heading(lines, mimeType) ?? firstLine(lines);
  const description = found === undefined ? undefined : bounded(found);
  return description === undefined || description === ''
    ? { mimeType, text, generated }
    : { mimeType, text, description, generated };
}

/**
 * Gives a listed item what its head says: the sniffed type, the description, and for a generated
 * file a low priority for the assistant (unless the provider set one already).
 */
export function applyHead(item: ResourceInfo, head: HeadInfo): void {
  item.mimeType = head.mimeType;
  if (head.description !== undefined) item.description = head.description;
  if (head.generated && item.annotations?.priority === undefined)
    item.annotations = { ...item.annotations, priority: LOW_PRIORITY, audience: ['assistant'] };
}

/** `description:` in YAML front matter (`---` … `---`), a plain or quoted scalar or a folded block. */
function frontMatter(lines: string[]): string | undefined {
  if (lines[0]?.trim() !== '---') return undefined;
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line.trim() === '---' || line.trim() === '...') return undefined;
    const match = /^description\s*:\s*(.*)$/.exec(line);
    if (match === null) continue;
    let value = match[1]!.trim();
    if (/^[>|][+-]?$/.test(value) || value === '') {
      const block: string[] = [];
      for (let j = i + 1; j < lines.length && /^\s+\S/.test(lines[j]!); j += 1)
        block.push(lines[j]!.trim());
      value = block.join(' ');
    } else if (/^(["']).*\1$/.test(value)) {
      value = value.slice(1, -1);
    }
    return value === '' ? undefined : value;
  }
  return undefined;
}

function heading(lines: string[], mimeType: string): string | undefined {
  if (mimeType === 'text/html' || mimeType === 'application/xhtml+xml') {
    const html = lines.join('\n');
    const tag =
      /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html) ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html);
    return tag === null ? undefined : plain(tag[1]!.replace(/<[^>]*>/g, ''));
  }
  if (!MARKDOWN.test(mimeType)) return undefined;
  let start = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex(
      (line, i) => i > 0 && (line.trim() === '---' || line.trim() === '...'),
    );
    start = end < 0 ? lines.length : end + 1;
  }
  let fenced = false;
  for (let i = start; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (/^\s*(?:```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const atx = /^\s{0,3}(?:#{1,6}|={1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (atx !== null) return plain(atx[1]!);
    const next = lines[i + 1];
    if (
      line.trim() !== '' &&
      next !== undefined &&
      /^\s{0,3}(?:={3,}|-{3,}|~{3,}|\^{3,})\s*$/.test(next)
    )
      return plain(line);
  }
  return undefined;
}

function firstLine(lines: string[]): string | undefined {
  for (const raw of lines) {
    if (raw.startsWith('#!')) continue;
    const line = raw.trim().replace(COMMENT_LEAD, '').replace(COMMENT_TAIL, '').trim();
    if (!/[\p{L}\p{N}]/u.test(line) || SKIPPED_LINE.test(line)) continue;
    return line;
  }
  return undefined;
}

/** Markdown emphasis, links and entities taken down to their text. */
function plain(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`]+/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

function bounded(text: string): string {
  // Control characters never reach a host's display.
  const clean = text
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (clean.length <= MAX_DESCRIPTION) return clean;
  const cut = clean.slice(0, MAX_DESCRIPTION - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > MAX_DESCRIPTION / 2 ? cut.slice(0, space) : cut}…`;
}
