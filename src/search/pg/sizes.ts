/**
 * Where a query's text matches begin in the rank order.
 *
 * First, from each lexeme's shortest text (schema.ts `lexemes`, kept by every write, never raised):
 * no text holding all of a query's words is shorter than the longest of their shortest texts
 * (`lowestSizeSql`). That bound is exact for one word, and a text removed later only leaves it
 * lower than it could be, so the walk (probe.ts) may start there and miss nothing. Then, when the
 * texts from there on are still sparse in matches, in the GIN index alone:
 *
 * A text ranks by its size (schema.ts `textScore`), so a word found only in long texts has every
 * match behind every short text: the ordered walk (probe.ts) sees none of it near the top, and the
 * GIN path reads every match's row (a heap row each, ~2.5 kB) to learn its size — 86,000 rows for a
 * word in 8.6% of a million texts. So each text's vector also holds its size as lexemes, one per
 * level of a 16-way tree over sizes (`#5.0` … `#0.3e8`: level, then the size's high hex digits).
 * A search descends that tree, at each level testing the children in size order for a match
 * (`query & '#level.child'`, a GIN intersection that reads no row but the first match's), and so
 * finds the smallest size any matching text has; the walk starts there. When no child at the top
 * level matches, no text does.
 *
 * The lexemes start with `#`, which no token holds (lexemes.ts: letters, digits and private-use
 * characters only), so no query a user writes matches them, a prefix included; they carry no
 * position, so no phrase reaches them.
 */
import type { QueryNode } from '../query.js';
import { lexemeOf } from './lexemes.js';
import { type Tables, textScore } from './schema.js';

/** Levels of the tree: level L holds a size's bits from 4·L up (6 levels: sizes below 16 MiB apart). */
const LEVELS = 6;
/** Sizes from here on count as this one: a lower bound of their size, all the descent needs. */
const MAX_SIZE = 16 ** LEVELS - 1;

/** The tree's lexeme for `value` (the size's bits from 4·level up) at `level`. */
function lexeme(level: number, value: number): string {
  return `#${level}.${value.toString(16)}`;
}

/** The size lexemes of a text of `bytes` bytes, as tsvector literal items (no positions). */
export function sizeLexemes(bytes: number): string {
  const size = Math.min(Math.max(0, Math.floor(bytes)), MAX_SIZE);
  const items: string[] = [];
  for (let level = LEVELS - 1; level >= 0; level -= 1)
    items.push(`'${lexeme(level, Math.floor(size / 16 ** level))}'`);
  return items.join(' ');
}

/** A tsquery of the texts of exactly `bytes` bytes (of MAX_SIZE or more when that is `bytes`). */
export function sizeQuery(bytes: number): string {
  return `'${lexeme(0, Math.min(bytes, MAX_SIZE))}'`;
}

/**
 * The SQL of the search: one row, `bytes`, the smallest size (at most MAX_SIZE) of a text matching
 * $1 (a tsquery) among those no shorter than the $2-th text in rank order of $3 bytes or more (a
 * walk of $2 texts from there found none), or no row when none does. It climbs from that size:
 * each step tests one node, the sizes right after those tested before — the next sibling, or,
 * after a node's last sibling, its parent's next — and at the first that holds a match goes down
 * to its first child, until one size. Matches near the start cost a few steps, and the wide nodes
 * tested on the way down hold only matches past the start. Run with `enable_seqscan` off: the
 * planner cannot estimate a query built row by row and would otherwise scan the table for the
 * first match.
 */
export function smallestSizeSql(t: Tables, score: string): string {
  const test = (level: string, value: string): string =>
    `EXISTS (SELECT 1 FROM ${t.blobs} b WHERE b.body @@ ($1::tsquery && ('''#' || ${level} || '.' || to_hex(${value}) || '''')::tsquery))`;
  const start = `(SELECT least(b.bytes, ${MAX_SIZE}) FROM ${t.blobs} b WHERE ${score} >= ${textScore('$3::integer')} ORDER BY ${score}, b.id OFFSET $2::integer - 1 LIMIT 1)`;
  const top = LEVELS - 1;
  return (
    `WITH RECURSIVE tree(level, value, found) AS (` +
    `SELECT 0, s.value, ${test('0', 's.value')} FROM (SELECT coalesce(${start}, 0) AS value) s ` +
    `UNION ALL ` +
    `SELECT n.level, n.value, ${test('n.level', 'n.value')} FROM tree ` +
    `CROSS JOIN LATERAL (SELECT ` +
    `CASE WHEN tree.found THEN tree.level - 1 WHEN (tree.value + 1) % 16 = 0 THEN tree.level + 1 ELSE tree.level END AS level, ` +
    `CASE WHEN tree.found THEN tree.value * 16 WHEN (tree.value + 1) % 16 = 0 THEN (tree.value + 1) / 16 ELSE tree.value + 1 END AS value) n ` +
    `WHERE (tree.found AND tree.level > 0) OR (NOT tree.found AND NOT (tree.level = ${top} AND tree.value >= 15))` +
    `) SELECT value AS bytes FROM tree WHERE found AND level = 0`
  );
}

/** What `lowestSizeSql` answers when no text holds some word the query needs: past every text. */
export const NO_TEXT = 2_147_483_647;

/**
 * The SQL of one row, `bytes`: a size no text matching `node` is below — for a word, its shortest
 * text; for words that must all be there (AND, a phrase), the largest of theirs; for OR, the
 * smallest; for a prefix, the shortest text of any word it begins. Words a text must not hold
 * bound nothing. NO_TEXT when a word the query needs is in no text. Its parameters are appended to
 * `values` (which already holds `values.length` of them).
 */
export function lowestSizeSql(t: Tables, node: QueryNode, values: unknown[]): string {
  const word = (token: string, prefix: boolean): string => {
    const lexeme = lexemeOf(token);
    if (!prefix) {
      values.push(lexeme);
      return `coalesce((SELECT x.bytes FROM ${t.lexemes} x WHERE x.lexeme = $${values.length}), ${NO_TEXT})`;
    }
    values.push(lexeme, afterPrefix(lexeme));
    return `coalesce((SELECT min(x.bytes) FROM ${t.lexemes} x WHERE x.lexeme >= $${values.length - 1} AND x.lexeme < $${values.length}), ${NO_TEXT})`;
  };
  const bound = (n: QueryNode): string => {
    switch (n.kind) {
      case 'term':
        return either(
          'greatest',
          n.tokens.map((token, i) => word(token, n.prefix && i === n.tokens.length - 1)),
        );
      case 'or':
        return either('least', n.nodes.map(bound));
      case 'and':
        return n.include.length === 0 ? '0' : either('greatest', n.include.map(bound));
    }
  };
  return `SELECT ${bound(node)}::integer AS bytes`;
}

/** The largest (AND) or smallest (OR) of `bounds`; one alone as it is. */
function either(pick: 'greatest' | 'least', bounds: string[]): string {
  return bounds.length === 1 ? bounds[0]! : `${pick}(${bounds.join(', ')})`;
}

/**
 * The least string after every string that begins with `prefix`, in the lexemes' order (COLLATE
 * "C": code points): its last code point below the highest, plus one, with what follows dropped.
 */
export function afterPrefix(prefix: string): string {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    // The next code point, stepping over the surrogates (no string holds one alone).
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    if (next <= 0x10ffff) return points.join('') + String.fromCodePoint(next);
  }
  // Every code point the highest: nothing sorts after, as no lexeme is longer than MAX_LEXEME.
  return `${prefix}${String.fromCodePoint(0x10ffff).repeat(501)}`;
}
