// The query language: what it compiles to FTS5 (every word quoted, so no FTS5 syntax can come from
// the user), the filters, and every query it refuses, with what and where.
import { drawn } from '../helpers/snippet.js';
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_LENGTH, parseQuery, QueryError } from '../../src/search/query.js';
import { snippetOf } from '../../src/search/document.js';
import { Segmenter } from '../../src/search/segment.js';

const segmenter = new Segmenter();
const match = (query: string): string => parseQuery(query, segmenter).match;
const refusal = (query: string): { message: string; column: number } => {
  try {
    parseQuery(query, segmenter);
  } catch (error) {
    if (error instanceof QueryError) return { message: error.message, column: error.column };
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(query)} to be refused`);
};

describe('parseQuery compiles', () => {
  it('joins words with AND by default and when AND is written', () => {
    expect(match('retry budget')).toBe('("retry" AND "budget")');
    expect(match('retry AND budget')).toBe('("retry" AND "budget")');
  });

  it('quotes what FTS5 would read as syntax, so NEAR, column filters and carets are plain words', () => {
    expect(match('NEAR(retry)')).toBe('("near" AND "retry")');
    expect(match('^start')).toBe('"start"');
    expect(match('foo.bar-baz')).toBe('"foo bar baz"');
  });

  it('compiles prefixes, phrases, OR, NOT, minus and parentheses', () => {
    expect(match('retr*')).toBe('"retr" *');
    expect(match('"Retry Budget"')).toBe('"retry budget"');
    expect(match('"retry bud"*')).toBe('"retry bud" *');
    expect(match('retry OR backoff')).toBe('("retry" OR "backoff")');
    expect(match('retry NOT budget')).toBe('("retry" NOT "budget")');
    expect(match('retry -budget -limit')).toBe('("retry" NOT "budget" NOT "limit")');
    expect(match('(retry OR backoff) budget')).toBe('(("retry" OR "backoff") AND "budget")');
  });

  it('segments Chinese and Japanese into words, so a run becomes a phrase of its words', () => {
    expect(match('资源订阅')).toBe('"资源 订阅"');
    expect(match('资源')).toBe('"资源"');
    expect(match('購読する')).toBe('"購読 する"');
  });

  it('collects filters apart from the words, and keeps the searched words for snippets', () => {
    const parsed = parseQuery('path:docs/ mime:text/* source:"my docs" Café NOT budget', segmenter);
    expect(parsed.filters).toEqual({ path: ['docs/'], mime: ['text/*'], source: ['my docs'] });
    expect(parsed.match).toBe('("cafe" NOT "budget")');
    expect(parsed.terms).toEqual([{ tokens: ['cafe'], prefix: false }]);
  });
});

describe('parseQuery refuses', () => {
  it.each([
    ['', 'the query is empty', 1],
    ['   ', 'the query is empty', 1],
    ['*', 'a wildcard needs at least one letter or digit before it', 1],
    ['retry *', 'a wildcard needs at least one letter or digit before it', 7],
    ['re*try', 'only a trailing * is supported', 3],
    ['"retry budget', 'this quote is never closed', 1],
    ['retry "budget', 'this quote is never closed', 7],
    ['colour:red', 'unknown filter colour:', 1],
    ['retry path:', 'the filter path: needs a value', 7],
    ['mime:markdown x', 'mime:markdown is not a MIME type', 1],
    ['(a OR path:docs/)', 'the filter path: applies to the whole query', 7],
    ['NOT retry', 'NOT needs something to exclude from', 1],
    ['retry OR', 'OR needs a word on each side', 9],
    ['OR retry', 'OR needs a word on each side', 1],
    ['(retry', 'this ( is never closed', 1],
    ['retry)', 'this ) has no matching (', 6],
    ['!!!', 'has no letters or digits', 1],
    // what the tokenizer separates or drops is no word either: a symbol, a combining accent alone
    ['retry 👍', 'has no letters or digits', 7],
    ['\u0301\u0301', 'has no letters or digits', 1],
    ['path:docs/', 'the query has only filters', 1],
    ['retry ()', 'these parentheses hold no word to look for', 7],
  ])('%j: %s (column %i)', (query, message, column) => {
    const refused = refusal(query);
    expect(refused.message).toContain(message);
    expect(refused.column).toBe(column);
  });

  it(`refuses a query over ${MAX_QUERY_LENGTH} characters, naming the limit`, () => {
    const refused = refusal('a'.repeat(MAX_QUERY_LENGTH + 1));
    expect(refused.message).toBe(
      `the query is ${MAX_QUERY_LENGTH + 1} characters long; the limit is ${MAX_QUERY_LENGTH}`,
    );
  });
});

describe('snippets', () => {
  const snippet = (text: string, query: string): string => {
    const { text: snippet, highlights } = snippetOf(text, parseQuery(query, segmenter).terms);
    return drawn({ snippet, highlights });
  };

  it('mark the match in mixed ASCII, accented, Han and kana text, at the right place in the original', () => {
    expect(snippet('Config: the RETRY budget.', 'retry')).toBe('Config: the ⟦RETRY⟧ budget.');
    expect(snippet('Le Café ouvre; 本系统支持资源订阅。', '订阅')).toBe(
      'Le Café ouvre; 本系统支持资源⟦订阅⟧。',
    );
    expect(snippet('À midi le CAFÉ ferme', 'cafe')).toBe('À midi le ⟦CAFÉ⟧ ferme');
    // が is か plus a voiced mark: folded alike in the text and the query.
    expect(snippet('データが届きました', 'データ')).toBe('⟦データ⟧が届きました');
    expect(snippet('ｘ ガイド ﾃｽﾄ', 'ガイド')).toBe('ｘ ⟦ガイド⟧ ﾃｽﾄ');
  });
});
