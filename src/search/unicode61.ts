/**
 * The words SQLite's FTS5 tokenizer `unicode61 remove_diacritics 2` makes of a text, made here in
 * JavaScript: the SQLite index tokenizes its texts that way, and every other place that must agree
 * with it — a query's words, the PostgreSQL index's lexemes (pg/lexemes.ts), a snippet's marks —
 * takes its words from `words` or `fold`, so a word matches the same texts on both engines.
 *
 * The tokenizer's rules are those of Unicode 6.1 as SQLite keeps them, which are not JavaScript's
 * `\p{…}` classes of today: combining marks (a Devanagari vowel sign, a Hebrew point) separate
 * words, code points unassigned in 6.1 are letters, a capital of a later version keeps its case,
 * and only Latin letters lose their diacritics (`é` is `e`; `й`, `ό` and `한` stay as they are).
 * So nothing is read from JavaScript's own Unicode data: the table (unicode61-table.ts) is SQLite's
 * answer for every code point, and test/search/unicode61.test.ts asks the SQLite in use again.
 */
import { DROPPED, FOLD_RUNS, SEPARATOR_RANGES } from './unicode61-table.js';

// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\u0000-\u007f]/;
/** In ASCII, letters and digits alone are parts of words. */
const NOT_ASCII_WORD = /[^a-z0-9]/g;
const NOT_ASCII_WORDS = /[^a-z0-9]+/;
const SPACES = / +/;
const SEPARATOR = 1;
const DROP = 2;

/** Per code point of the first plane: 0 a word's, SEPARATOR, or DROP. */
const kinds = new Uint8Array(0x10000);
/** Per code point of the first plane: what it folds to, or 0 for itself. */
const folds = new Uint32Array(0x10000);
/** Code points past the first plane that separate words, as [first, last] pairs. */
const farSeparators: number[] = [];
/** Folds past the first plane. */
const farFolds = new Map<number, number>();

for (let i = 0; i < SEPARATOR_RANGES.length; i += 2) {
  const first = SEPARATOR_RANGES[i]!;
  const last = SEPARATOR_RANGES[i + 1]!;
  if (first > 0xffff) farSeparators.push(first, last);
  else kinds.fill(SEPARATOR, first, Math.min(last, 0xffff) + 1);
  if (first <= 0xffff && last > 0xffff) farSeparators.push(0x10000, last);
}
for (const c of DROPPED) kinds[c] = DROP;
for (let i = 0; i < FOLD_RUNS.length; i += 4) {
  const [first, count, delta, stride] = FOLD_RUNS.slice(i, i + 4) as [
    number,
    number,
    number,
    number,
  ];
  for (let k = 0; k < count; k += 1) {
    const c = first + k * stride;
    if (c <= 0xffff) folds[c] = c + delta;
    else farFolds.set(c, c + delta);
  }
}

/** Whether the code point `c`, past the first plane, separates words. */
function farSeparates(c: number): boolean {
  let low = 0;
  let high = farSeparators.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (c < farSeparators[mid * 2]!) high = mid - 1;
    else if (c > farSeparators[mid * 2 + 1]!) low = mid + 1;
    else return true;
  }
  return false;
}

/** Whether code point `c` is part of a word (a letter, a digit, or one the tokenizer keeps as such). */
export function isWordChar(c: number): boolean {
  return c <= 0xffff ? kinds[c] !== SEPARATOR : !farSeparates(c);
}

/**
 * `text` as the tokenizer reads it: each character that separates words a space, each it drops
 * removed, every other folded (case and Latin diacritics) — a character for a character, but the
 * dropped. Words are the runs between spaces.
 */
export function fold(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase().replace(NOT_ASCII_WORD, ' ');
  let out = '';
  // characters that stay as they are are copied a run at a time, from `plain` on
  let plain = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      if ((unit >= 0x61 && unit <= 0x7a) || (unit >= 0x30 && unit <= 0x39)) continue;
      out += text.slice(plain, i);
      out += unit >= 0x41 && unit <= 0x5a ? String.fromCharCode(unit + 32) : ' ';
      plain = i + 1;
    } else if (unit < 0xd800 || unit > 0xdfff) {
      const kind = kinds[unit];
      if (kind === 0 && folds[unit] === 0) continue;
      out += text.slice(plain, i);
      plain = i + 1;
      if (kind === SEPARATOR) out += ' ';
      else if (kind !== DROP) out += String.fromCodePoint(folds[unit]!);
    } else {
      out += text.slice(plain, i);
      const point = text.codePointAt(i)!;
      if (point <= 0xffff) {
        // a surrogate alone reaches SQLite as U+FFFD (UTF-8 has no spelling for it)
        out += kinds[0xfffd] === SEPARATOR ? ' ' : '\ufffd';
        plain = i + 1;
        continue;
      }
      out += farSeparates(point) ? ' ' : String.fromCodePoint(farFolds.get(point) ?? point);
      i += 1;
      plain = i + 1;
    }
  }
  return out + text.slice(plain);
}

/** The words of `text`, folded, in order. */
export function words(text: string): string[] {
  const parts = NON_ASCII.test(text)
    ? fold(text).split(SPACES)
    : text.toLowerCase().split(NOT_ASCII_WORDS);
  // runs split as one: only the ends can be empty
  if (parts.at(-1) === '') parts.pop();
  if (parts[0] === '') parts.shift();
  return parts;
}
