/**
 * Text as PostgreSQL full-text search is given it: the index builds every `tsvector` and `tsquery`
 * here, from the same words SQLite's `unicode61 remove_diacritics 2` tokenizer makes (unicode61.ts,
 * to the code point), with Chinese and Japanese already split into words by the segmenter the
 * SQLite index uses (segment.ts). PostgreSQL's own parsers and dictionaries never see the text
 * (they would keep `foo-bar` whole, read `a.b.com` as a host, stem English words), so a query
 * matches the same documents on both engines, CJK text included.
 *
 * PostgreSQL's limits, applied alike at index and query time: a lexeme is cut to MAX_LEXEME
 * characters; positions past 16,383 are counted as 16,383 (a phrase beyond the first 16,383 words
 * of a text may then match loosely); a lexeme keeps its first 256 positions; a vector stops taking
 * new lexemes near PostgreSQL's 1 MB bound (a 1 MiB text of that many distinct words loses its last ones).
 */
import type { QueryNode } from '../query.js';
import { words } from '../unicode61.js';
/** Characters kept of a token: at most 4 UTF-8 bytes each, under PostgreSQL's 2,046-byte lexeme bound. */
const MAX_LEXEME = 500;
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 256;
/** A vector's estimated size at which it takes no new lexeme (PostgreSQL refuses one over 1 MiB). */
const MAX_VECTOR_BYTES = 1_000_000;

/** A token as the index holds it: cut to MAX_LEXEME characters. */
export function lexemeOf(token: string): string {
  return token.length > MAX_LEXEME ? token.slice(0, MAX_LEXEME) : token;
}

/** The tokens of a text, as the index holds them. */
export function tokensOf(text: string): string[] {
  const tokens: string[] = [];
  for (const token of words(text)) tokens.push(lexemeOf(token));
  return tokens;
}

/** A lexeme quoted for a tsvector or tsquery literal. */
function quoted(lexeme: string): string {
  return `'${lexeme.replace(/['\\]/g, (c) => c + c)}'`;
}

/**
 * A tsvector literal of the fields in order, each with its weight (A, B, C or D); a field's first
 * position follows the last one of the field before with a gap, so no phrase spans two fields.
 */
export function vectorOf(fields: readonly { text: string; weight: 'A' | 'B' | 'D' }[]): string {
  return vectorAndLexemes(fields).vector;
}

/** `vectorOf`'s literal, and the lexemes it holds. */
export function vectorAndLexemes(fields: readonly { text: string; weight: 'A' | 'B' | 'D' }[]): {
  vector: string;
  lexemes: Iterable<string>;
} {
  const positions = new Map<string, string[]>();
  let bytes = 0;
  let position = 0;
  for (const field of fields) {
    const mark = field.weight === 'D' ? '' : field.weight;
    for (const token of tokensOf(field.text)) {
      position += 1;
      let list = positions.get(token);
      if (list === undefined) {
        const size = Buffer.byteLength(token) + 8;
        if (bytes + size > MAX_VECTOR_BYTES) continue;
        bytes += size;
        positions.set(token, (list = []));
      }
      if (list.length >= MAX_POSITIONS) continue;
      list.push(`${Math.min(position, MAX_POSITION)}${mark}`);
      bytes += 2;
    }
    position += 1;
  }
  const parts: string[] = [];
  for (const [token, list] of positions) parts.push(`${quoted(token)}:${list.join(',')}`);
  return { vector: parts.join(' '), lexemes: positions.keys() };
}

/** A tsquery literal of a parsed query: phrases as `<->` chains, a prefix as `:*`, AND NOT as `& !`, OR as `|`. */
export function tsqueryOf(node: QueryNode): string {
  switch (node.kind) {
    case 'term': {
      const lexemes = node.tokens.map((t) => quoted(lexemeOf(t)));
      if (node.prefix) lexemes[lexemes.length - 1] += ':*';
      return lexemes.length === 1 ? lexemes[0]! : `(${lexemes.join(' <-> ')})`;
    }
    case 'or':
      return `(${node.nodes.map(tsqueryOf).join(' | ')})`;
    case 'and':
      return `(${[...node.include.map(tsqueryOf), ...node.exclude.map((n) => `!${tsqueryOf(n)}`)].join(' & ')})`;
  }
}
