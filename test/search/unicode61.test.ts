// The index's own tokenizer (src/search/unicode61.ts) makes the words SQLite's `unicode61
// remove_diacritics 2` makes: asked of the SQLite in use for every code point it has tables for,
// and for whole texts of many scripts; a query's words then match on the SQLite index (where they
// once were folded further than the index, and found nothing).
import { describe, expect, it } from 'vitest';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { fold, isWordChar, words } from '../../src/search/unicode61.js';
// @ts-expect-error: a plain script, no declarations
import { RANGES, tokenizerTable, tokenizerWords } from '../../scripts/unicode61.mjs';

const Database = loadSqliteDriver();

const TEXTS = [
  'Край ёлки, σοφός ΣΟΦΟΣ, 한국어 검색, हिन्दी भाषा, مَرْحَبًا بِكُمْ, שָׁלוֹם, ภาษาไทย',
  'Tiếng Việt có dấu; naïve CAFÉ café cafe\u0301; Straße ẞ; İstanbul ıi; ǅemal ǆ; ﬁle',
  'ＡＢＣ full width, ١٢٣ ۴۵۶, µ ſ ς ϐ, Ꭰꭰ cherokee, 𐐀𐐨 deseret, 𝐀𝐁 bold, 👍ok, zw\u200bj',
  'snake_case x86_64 v2.1 3.14 ops@example.com it’s co‐op x—y a\u00a0b e\u0301\u0301 \u0301lone',
  'バ ハ\u3099 ヴァ がぎ 本系统支持资源订阅 \ud800 lone surrogate \udfff',
];

describe("the index's tokenizer", () => {
  it('separates, drops and folds every code point as SQLite does, and a folded one stays as it is', () => {
    const table = tokenizerTable(Database, RANGES) as Map<number, 'sep' | 'drop' | number>;
    const wrong: string[] = [];
    for (const [c, what] of table) {
      const got = fold(`a${String.fromCodePoint(c)}b`);
      const want =
        what === 'sep' ? 'a b' : what === 'drop' ? 'ab' : `a${String.fromCodePoint(what)}b`;
      if (got !== want)
        wrong.push(`U+${c.toString(16)}: ${JSON.stringify(got)}, SQLite ${JSON.stringify(want)}`);
      if (isWordChar(c) !== (what !== 'sep')) wrong.push(`U+${c.toString(16)}: isWordChar`);
      // a query's words reach FTS5 folded, and FTS5 folds them again: that must change nothing
      if (typeof what === 'number' && table.get(what) !== undefined && table.get(what) !== what)
        wrong.push(`U+${c.toString(16)}: folds to U+${what.toString(16)}, which folds again`);
    }
    expect(wrong.slice(0, 20)).toEqual([]);
    const asked = (RANGES as [number, number][]).reduce(
      (n, [first, last]) => n + last - first + 1,
      0,
    );
    expect(table.size).toBe(asked);
  });

  it('makes the words SQLite makes of texts in many scripts, and folding twice changes nothing', () => {
    const theirs = tokenizerWords(Database, TEXTS) as string[][];
    TEXTS.forEach((text, i) => {
      expect(words(text)).toEqual(theirs[i]);
      expect(fold(fold(text))).toBe(fold(text));
    });
    expect(words('Край σοφός 한국어')).toEqual(['край', 'σοφόσ', '한국어']);
  });

  it('finds on the SQLite index every word of those texts, written as the texts spell it', () => {
    const db = new Database(':memory:');
    try {
      db.exec(
        `CREATE VIRTUAL TABLE t USING fts5(body, tokenize = "unicode61 remove_diacritics 2")`,
      );
      const insert = db.prepare('INSERT INTO t(rowid, body) VALUES (?, ?)');
      TEXTS.forEach((text, i) => insert.run(i + 1, text));
      const match = db.prepare('SELECT rowid FROM t WHERE t MATCH ?');
      const missed: string[] = [];
      TEXTS.forEach((text, i) => {
        for (const piece of text.split(/[\s,;]+/)) {
          const tokens = words(piece);
          if (tokens.length === 0) continue;
          const rows = (match.all(`"${tokens.join(' ')}"`) as { rowid: number }[]).map(
            (r) => r.rowid,
          );
          if (!rows.includes(i + 1)) missed.push(piece);
        }
      });
      expect(missed).toEqual([]);
    } finally {
      db.close();
    }
  });
});
