/**
 * The search query language, parsed here and compiled to an FTS5 MATCH expression — so a query the
 * user writes can never reach SQLite as FTS5 syntax, and every mistake is reported with what and
 * where (a 1-based column).
 *
 *   retry budget            both words (AND is the default; `AND` may be written)
 *   retr*                   a prefix
 *   "retry budget"          a phrase
 *   retry OR backoff        either; `NOT word` or `-word` leaves out; parentheses group
 *   path:docs/  mime:text/markdown  mime:text/*  source:NAME     filters (values may be quoted)
 *
 * Words are the SQLite tokenizer's (unicode61.ts): matched regardless of case, and of the
 * diacritics of Latin letters; Chinese and Japanese are split into words with the same segmenter
 * the indexer uses.
 */
import type { Segmenter } from './segment.js';
import { words } from './unicode61.js';

export const MAX_QUERY_LENGTH = 1000;
export const FILTERS = ['path', 'mime', 'source'] as const;
export type FilterName = (typeof FILTERS)[number];

/** A query the parser refuses: what is wrong, and the 1-based column where. */
export class QueryError extends Error {
  constructor(
    message: string,
    readonly column: number,
  ) {
    super(message);
  }
}

/** A word or phrase to show in snippets: its folded tokens, and whether the last one is a prefix. */
export interface SnippetTerm {
  tokens: string[];
  prefix: boolean;
}

export interface ParsedQuery {
  /** The FTS5 MATCH expression. */
  match: string;
  filters: Record<FilterName, string[]>;
  /** The words the caller looks for (not those excluded), for snippets. */
  terms: SnippetTerm[];
  /** The query's tree, for engines that compile it themselves (PostgreSQL's tsquery). */
  tree: QueryNode;
}

type Token =
  | { kind: 'word'; text: string; column: number; quoted: boolean; prefix: boolean }
  | { kind: 'filter'; name: string; value: string; column: number }
  | { kind: 'op'; op: 'AND' | 'OR' | 'NOT' | '(' | ')' | '-'; column: number };

/** A parsed query: a word or phrase (its folded tokens; `prefix`: the last is a prefix), AND NOT, OR. */
export type QueryNode =
  | { kind: 'term'; match: string; tokens: string[]; prefix: boolean }
  | { kind: 'and'; include: QueryNode[]; exclude: QueryNode[] }
  | { kind: 'or'; nodes: QueryNode[] };
type Node = QueryNode;

export function parseQuery(input: string, segmenter: Segmenter): ParsedQuery {
  if (input.trim() === '') throw new QueryError('the query is empty: give at least one word', 1);
  if (input.length > MAX_QUERY_LENGTH)
    throw new QueryError(
      `the query is ${input.length} characters long; the limit is ${MAX_QUERY_LENGTH}`,
      MAX_QUERY_LENGTH + 1,
    );
  const tokens = tokenize(input);
  const filters: Record<FilterName, string[]> = { path: [], mime: [], source: [] };
  const terms: SnippetTerm[] = [];
  let position = 0;
  const peek = (): Token | undefined => tokens[position];

  const term = (token: Extract<Token, { kind: 'word' }>, negated: boolean): Node => {
    const text = segmenter.segment(token.text).trim();
    const tokensOf = words(text);
    if (tokensOf.length === 0) {
      if (token.prefix && text === '')
        throw new QueryError(
          'a wildcard needs at least one letter or digit before it (e.g. retr*)',
          token.column,
        );
      throw new QueryError(
        `${JSON.stringify(token.text)} has no letters or digits to search for`,
        token.column,
      );
    }
    if (!negated) terms.push({ tokens: tokensOf, prefix: token.prefix });
    return {
      kind: 'term',
      match: `"${tokensOf.join(' ')}"${token.prefix ? ' *' : ''}`,
      tokens: tokensOf,
      prefix: token.prefix,
    };
  };

  const primary = (negated: boolean, depth: number): Node => {
    const token = peek();
    if (token === undefined)
      throw new QueryError('the query ends where a word was expected', input.length + 1);
    position += 1;
    if (token.kind === 'word') return term(token, negated);
    if (token.kind === 'filter')
      throw new QueryError(
        `the filter ${token.name}: applies to the whole query; it cannot be inside OR, NOT or parentheses`,
        token.column,
      );
    if (token.op === '(') {
      if (depth > 20) throw new QueryError('parentheses are nested too deeply', token.column);
      const inner = or(negated, depth + 1);
      const close = peek();
      if (close?.kind !== 'op' || close.op !== ')')
        throw new QueryError('this ( is never closed', token.column);
      position += 1;
      if (inner.kind === 'and' && inner.include.length === 0)
        throw new QueryError('these parentheses hold no word to look for', token.column);
      return inner;
    }
    throw new QueryError(`${token.op} needs a word before and after it`, token.column);
  };

  const and = (negated: boolean, depth: number): Node => {
    const include: Node[] = [];
    const exclude: Node[] = [];
    let start = peek()?.column ?? input.length + 1;
    for (;;) {
      const token = peek();
      if (token === undefined || (token.kind === 'op' && (token.op === 'OR' || token.op === ')')))
        break;
      if (token.kind === 'filter') {
        if (depth > 0 || negated)
          throw new QueryError(
            `the filter ${token.name}: applies to the whole query; it cannot be inside OR, NOT or parentheses`,
            token.column,
          );
        position += 1;
        filters[token.name as FilterName].push(token.value);
        continue;
      }
      if (token.kind === 'op' && token.op === 'AND') {
        if (include.length + exclude.length === 0)
          throw new QueryError('AND needs a word before it', token.column);
        position += 1;
        continue;
      }
      if (token.kind === 'op' && (token.op === 'NOT' || token.op === '-')) {
        position += 1;
        exclude.push(primary(!negated, depth));
        continue;
      }
      if (include.length + exclude.length === 0) start = token.column;
      include.push(primary(negated, depth));
    }
    if (include.length === 0 && exclude.length > 0)
      throw new QueryError('NOT needs something to exclude from: add a word to look for', start);
    if (include.length === 0) return { kind: 'and', include, exclude };
    return include.length === 1 && exclude.length === 0
      ? include[0]!
      : { kind: 'and', include, exclude };
  };

  const or = (negated: boolean, depth: number): Node => {
    const nodes: Node[] = [];
    for (;;) {
      const before = peek();
      const node = and(negated, depth);
      const empty = node.kind === 'and' && node.include.length === 0;
      const next = peek();
      if (empty && (nodes.length > 0 || (next?.kind === 'op' && next.op === 'OR'))) {
        throw new QueryError(
          'OR needs a word on each side',
          (next ?? before)?.column ?? input.length + 1,
        );
      }
      if (!empty) nodes.push(node);
      if (next?.kind === 'op' && next.op === 'OR') {
        position += 1;
        continue;
      }
      break;
    }
    if (nodes.length === 0) return { kind: 'and', include: [], exclude: [] };
    return nodes.length === 1 ? nodes[0]! : { kind: 'or', nodes };
  };

  const tree = or(false, 0);
  const rest = peek();
  if (rest !== undefined)
    throw new QueryError(
      rest.kind === 'op' && rest.op === ')' ? 'this ) has no matching (' : 'unexpected text',
      rest.column,
    );
  if (tree.kind === 'and' && tree.include.length === 0)
    throw new QueryError('the query has only filters: add a word to look for', 1);
  return { match: compile(tree), filters, terms, tree };
}

function compile(node: Node): string {
  switch (node.kind) {
    case 'term':
      return node.match;
    case 'or':
      return `(${node.nodes.map(compile).join(' OR ')})`;
    case 'and': {
      const include = node.include.map(compile).join(' AND ');
      const positive = node.include.length > 1 ? `(${include})` : include;
      return node.exclude.length === 0
        ? positive
        : `(${[positive, ...node.exclude.map(compile)].join(' NOT ')})`;
    }
  }
}

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    const column = i + 1;
    if (/\s/u.test(ch)) {
      i += 1;
    } else if (ch === '(' || ch === ')') {
      tokens.push({ kind: 'op', op: ch, column });
      i += 1;
    } else if (
      ch === '-' &&
      i + 1 < input.length &&
      !/\s/u.test(input[i + 1]!) &&
      (i === 0 || /[\s(]/u.test(input[i - 1]!))
    ) {
      tokens.push({ kind: 'op', op: '-', column });
      i += 1;
    } else if (ch === '"') {
      const end = input.indexOf('"', i + 1);
      if (end < 0) throw new QueryError('this quote is never closed', column);
      const prefix = input[end + 1] === '*';
      tokens.push({ kind: 'word', text: input.slice(i + 1, end), column, quoted: true, prefix });
      i = end + 1 + (prefix ? 1 : 0);
      if (i < input.length && !/[\s()]/u.test(input[i]!))
        throw new QueryError('a phrase must be followed by a space', i + 1);
    } else {
      let end = i;
      while (end < input.length && !/[\s()"]/u.test(input[end]!)) end += 1;
      const raw = input.slice(i, end);
      if (input[end] === '"' && /^[A-Za-z]+:$/.test(raw)) {
        // A filter with a quoted value: path:"my docs/"
        const close = input.indexOf('"', end + 1);
        if (close < 0) throw new QueryError('this quote is never closed', end + 1);
        tokens.push(filterToken(raw.slice(0, -1), input.slice(end + 1, close), column));
        i = close + 1;
        continue;
      }
      if (input[end] === '"')
        throw new QueryError('a quote must start a phrase: put a space before it', end + 1);
      tokens.push(wordToken(raw, column));
      i = end;
    }
  }
  return tokens;
}

function wordToken(raw: string, column: number): Token {
  if (raw === 'AND' || raw === 'OR' || raw === 'NOT') return { kind: 'op', op: raw, column };
  const filter = /^([A-Za-z]+):(.*)$/s.exec(raw);
  if (filter !== null) return filterToken(filter[1]!, filter[2]!, column);
  const star = raw.indexOf('*');
  if (star >= 0 && star !== raw.length - 1)
    throw new QueryError(
      `only a trailing * is supported (a prefix such as retr*), not ${JSON.stringify(raw)}`,
      column + star,
    );
  const prefix = star === raw.length - 1;
  return { kind: 'word', text: prefix ? raw.slice(0, -1) : raw, column, quoted: false, prefix };
}

function filterToken(name: string, value: string, column: number): Token {
  const known = (FILTERS as readonly string[]).includes(name.toLowerCase());
  if (!known)
    throw new QueryError(
      `unknown filter ${name}: (the filters are ${FILTERS.map((f) => `${f}:`).join(', ')}); to search for the text, put it in quotes`,
      column,
    );
  if (value === '')
    throw new QueryError(
      `the filter ${name}: needs a value, e.g. ${example(name.toLowerCase())}`,
      column,
    );
  if (
    name.toLowerCase() === 'mime' &&
    !/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/(?:\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)$/.test(value)
  ) {
    throw new QueryError(
      `mime:${value} is not a MIME type; use one such as mime:text/markdown or mime:text/*`,
      column,
    );
  }
  return { kind: 'filter', name: name.toLowerCase(), value, column };
}

function example(name: string): string {
  return name === 'path' ? 'path:docs/' : name === 'mime' ? 'mime:text/markdown' : 'source:docs';
}
