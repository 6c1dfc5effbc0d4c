/**
 * What one resource contributes to the index (its name, its path under the source's root, its text)
 * and what identifies its state (the signature change detection compares), plus the snippet cut
 * from its text when it is shown as a hit.
 */
import { createHash } from 'node:crypto';
import type { ResourceContents, ResourceInfo } from '../core/types.js';
import type { SnippetTerm } from './query.js';
import type { Segmenter } from './segment.js';
import type { NewDoc } from './store.js';
import { fold, isWordChar } from './unicode61.js';

/** Text beyond this many characters is not searched for a snippet. */
const SNIPPET_SCAN = 256 * 1024;
const SNIPPET_WIDTH = 160;

/**
 * The signature of a listed resource: its content id when the source gives one; else size and
 * modification time when the source reports a time; otherwise undefined, and the content decides
 * (`contentSignature`).
 */
export function listedSignature(info: ResourceInfo): string | undefined {
  if (info.contentId !== undefined) return `c:${info.contentId}`;
  const modified = info.annotations?.lastModified;
  return modified === undefined ? undefined : `m:${info.size ?? ''}:${modified}`;
}

export function contentSignature(text: string): string {
  return `h:${createHash('sha1').update(text).digest('base64')}`;
}

/** Whether a listed item is a container (a directory) rather than a document. */
export function isContainer(info: ResourceInfo): boolean {
  return info.uri.endsWith('/') || info.mimeType === 'inode/directory';
}

/** The path of `uri` under `root`, percent-decoded where that is valid. */
export function pathUnder(uri: string, root: string): string {
  const rest = uri.startsWith(root) ? uri.slice(root.length) : uri;
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

/** The text of a read result worth indexing: the first text content, when within the cap. */
export function indexableText(contents: readonly ResourceContents[], maxBytes: number): string {
  const first = contents[0];
  if (first === undefined || !('text' in first) || first.mimeType === 'inode/directory') return '';
  // UTF-8 takes at most three bytes per UTF-16 code unit: a text that short is within the cap
  // without being measured.
  const { length } = first.text;
  if (length > maxBytes || (length * 3 > maxBytes && Buffer.byteLength(first.text) > maxBytes))
    return '';
  return first.text;
}

/**
 * The key a resource's text is stored under: its content id when the source gives one (text shared
 * by several resources is then stored once), else its own URI.
 */
export function textKey(info: ResourceInfo): string {
  return info.contentId === undefined ? `uri:${info.uri}` : `id:${info.contentId}`;
}

/**
 * The document of a resource. `text`: its text (indexed under `key`), a key already stored (the
 * text is not repeated), or undefined (the name and path alone are indexed).
 */
export function buildDoc(
  info: ResourceInfo,
  mount: string,
  sig: string,
  segmenter: Segmenter,
  text?: { key: string; text?: string; bytes?: number },
): NewDoc {
  const path = pathUnder(info.uri, mount);
  const doc: NewDoc = {
    uri: info.uri,
    mount,
    name: info.name,
    title: info.title,
    mime: info.mimeType,
    modified: info.annotations?.lastModified,
    sig,
    fields: { name: segmenter.segment(info.name), path: segmenter.segment(path) },
  };
  if (text !== undefined && text.text === undefined)
    doc.text = { key: text.key, bytes: text.bytes ?? 0 };
  else if (text?.text !== undefined && text.text !== '')
    doc.text = {
      key: text.key,
      body: segmenter.segment(text.text),
      bytes: Buffer.byteLength(text.text),
    };
  return doc;
}

/**
 * A snippet: text with no markup, and where the matches lie in it — `[start, end)` offsets in UTF-16
 * code units (JavaScript string indices), in order and not overlapping. Markers in the text could
 * be mistaken for the file's own (Markdown's `**bold**`), ranges cannot.
 */
export interface Snippet {
  text: string;
  highlights: [number, number][];
  /** Where the first match begins in the text the snippet was cut from; absent when none occurs. */
  at?: number;
}

/**
 * About SNIPPET_WIDTH characters of `text` around the first place one of `terms` occurs, with the
 * match's range; the start of the text and no range when no term occurs in it (a name or path match).
 */
export function snippetOf(text: string, terms: readonly SnippetTerm[]): Snippet {
  const scanned = text.length > SNIPPET_SCAN ? text.slice(0, SNIPPET_SCAN) : text;
  const { folded, origin } = foldWithMap(scanned);
  let best: { start: number; end: number } | undefined;
  for (const term of terms) {
    const found = findTerm(folded, term);
    if (found !== undefined && (best === undefined || found.start < best.start)) best = found;
  }
  if (best === undefined)
    return {
      text:
        squeeze(scanned.slice(0, SNIPPET_WIDTH)).trim() +
        (scanned.length > SNIPPET_WIDTH ? '…' : ''),
      highlights: [],
    };
  const start = origin === undefined ? best.start : origin[best.start]!;
  const end = origin === undefined ? best.end : (origin[best.end] ?? scanned.length);
  const from = Math.max(0, start - Math.floor((SNIPPET_WIDTH - (end - start)) / 2));
  const to = Math.min(scanned.length, Math.max(end, from + SNIPPET_WIDTH));
  const before = `${from > 0 ? '…' : ''}${squeeze(scanned.slice(from, start)).trimStart()}`;
  const match = squeeze(scanned.slice(start, end));
  const after = `${squeeze(scanned.slice(end, to)).trimEnd()}${to < text.length ? '…' : ''}`;
  return {
    text: before + match + after,
    highlights: match === '' ? [] : [[before.length, before.length + match.length]],
    at: start,
  };
}

/** A part marker line of a document's rendition (src/documents/markdown.ts): `<!-- page 3 -->`. */
const PART_MARKER = /^<!-- (page|sheet|slide|chapter) ([^\n]*?) -->$/gmu;

/**
 * The part of a document's rendition that offset `at` lies in (`page 3`, `sheet Budget`), from the
 * last part marker before it; undefined before the first marker or when the text has none.
 */
export function partAt(rendition: string, at: number): string | undefined {
  let part: string | undefined;
  for (const marker of rendition.slice(0, at).matchAll(PART_MARKER))
    part = `${marker[1]!} ${marker[2]!}`;
  return part;
}

function squeeze(text: string): string {
  return text.replace(/\s+/gu, ' ');
}

/** Whether the character at `i` of `text` is part of a word, as the tokenizer reads it. */
const wordAt = (text: string, i: number): boolean => isWordChar(text.codePointAt(i)!);
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Where the term's tokens occur in order, separated by non-word characters only. */
function findTerm(folded: string, term: SnippetTerm): { start: number; end: number } | undefined {
  const first = term.tokens[0];
  if (first === undefined) return undefined;
  let from = 0;
  for (;;) {
    const start = folded.indexOf(first, from);
    if (start < 0) return undefined;
    from = start + 1;
    const cjk = CJK.test(first);
    if (!cjk && start > 0 && wordAt(folded, start - 1)) continue;
    let at = start;
    let ok = true;
    for (let i = 0; i < term.tokens.length; i += 1) {
      const token = term.tokens[i]!;
      if (i > 0) {
        while (at < folded.length && !wordAt(folded, at)) at += 1;
        if (!folded.startsWith(token, at)) {
          ok = false;
          break;
        }
      }
      at += token.length;
      const last = i === term.tokens.length - 1;
      if (!CJK.test(token) && !(last && term.prefix) && at < folded.length && wordAt(folded, at)) {
        ok = false;
        break;
      }
    }
    if (ok) {
      if (term.prefix) while (at < folded.length && wordAt(folded, at)) at += 1;
      return { start, end: at };
    }
  }
}

/**
 * The folded text and, for each folded index, the index in the original it came from (undefined:
 * the same index, as for ASCII text, folded by lower-casing alone).
 */
function foldWithMap(text: string): { folded: string; origin: number[] | undefined } {
  // eslint-disable-next-line no-control-regex
  if (!/[^\u0000-\u007f]/.test(text)) return { folded: text.toLowerCase(), origin: undefined };
  let folded = '';
  const origin: number[] = [];
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      // A run of ASCII: lower-cased as a whole, one origin per character.
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) < 0x80) end += 1;
      folded += text.slice(i, end).toLowerCase();
      for (let k = i; k < end; k += 1) origin.push(k);
      i = end;
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(i)!);
    // Han ideographs (U+3400–U+9FFF) neither decompose nor change case: kept as they are (kana,
    // which may decompose, fold keeps whole too).
    const f = code >= 0x3400 && code <= 0x9fff ? char : fold(char);
    for (let k = 0; k < f.length; k += 1) origin.push(i);
    folded += f;
    i += char.length;
  }
  origin.push(text.length);
  return { folded, origin };
}
