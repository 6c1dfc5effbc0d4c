/**
 * The SQL lexer of the lexical guard (guard.ts): words, quoted identifiers, symbols and semicolons,
 * with comments, string literals and numbers skipped, by the rules of the database that will run
 * the statement (see `SqlDialect`).
 */

/**
 * Whose lexical rules apply. They differ where a mismatch would hide text from the check: only
 * PostgreSQL has `E'…'` (backslash escapes), `$tag$…$tag$`, `U&"…"` and nested block comments; only
 * SQLite has `[…]` and backtick identifiers (to PostgreSQL `[` is a subscript, inside which a quote
 * opens a string).
 */
export type SqlDialect = 'postgres' | 'sqlite' | 'mysql';

export interface Token {
  /** `executable`: a MySQL comment whose text the server runs (`/*!`, `/*M!`). */
  kind: 'word' | 'quoted' | 'symbol' | 'semicolon' | 'executable';
  text: string;
  /** Where a semicolon stands in the text. */
  at?: number;
}

/**
 * Splits SQL into words (lower-cased), quoted identifiers (lower-cased contents), symbols and
 * semicolons, skipping whitespace, comments (`--`, nested `/* *\/`), string literals ('…', E'…',
 * $tag$…$tag$) and numbers. Undefined when a literal or comment never ends.
 */
export function tokenize(sql: string, dialect: SqlDialect): Token[] | undefined {
  const pg = dialect === 'postgres';
  const my = dialect === 'mysql';
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i += 1;
    } else if (
      (c === '-' && sql[i + 1] === '-' && (!my || i + 2 >= n || sql.charCodeAt(i + 2) <= 0x20)) ||
      (my && c === '#')
    ) {
      // MySQL: `--` opens a comment only before a blank or a control character (`1--1` is arithmetic)
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (
      my &&
      c === '/' &&
      sql[i + 1] === '*' &&
      (sql[i + 2] === '!' || (sql[i + 2] === 'M' && sql[i + 3] === '!'))
    ) {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      tokens.push({ kind: 'executable', text: sql.slice(i, end + 2) });
      i = end + 2;
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        const pair = sql.slice(i, i + 2);
        if ((pair === '/*' && pg) || pair === '*/') {
          // PostgreSQL nests block comments; SQLite ends one at the first */
          depth += pair === '/*' ? 1 : -1;
          i += 2;
        } else {
          i += 1;
        }
      }
      if (depth > 0) return undefined;
    } else if (c === "'" || (my && c === '"')) {
      // MySQL strings take backslash escapes and either quote (no ANSI_QUOTES in the dialect's session)
      const end = closing(
        sql,
        i,
        c,
        my || (pg && /[eE]/.test(sql[i - 1] ?? '') && !/\w/.test(sql[i - 2] ?? '')),
      );
      if (end < 0) return undefined;
      i = end;
    } else if (
      pg &&
      (c === 'u' || c === 'U') &&
      sql[i + 1] === '&' &&
      sql[i + 2] === '"' &&
      !/[A-Za-z0-9_$\u0080-\uffff]/.test(sql[i - 1] ?? '')
    ) {
      // U&"d\0061ta" [UESCAPE '!']: a Unicode-escaped identifier, compared by what it spells.
      const end = closing(sql, i + 2, '"', false);
      if (end < 0) return undefined;
      const escape =
        /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*uescape(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*'([^'])'/i.exec(
          sql.slice(end, end + 4096),
        )?.[1] ?? '\\';
      const text = unicodeEscapes(sql.slice(i + 3, end - 1).replaceAll('""', '"'), escape);
      if (text === undefined) return undefined;
      tokens.push({ kind: 'quoted', text: text.toLowerCase() });
      i = end;
    } else if (c === '"' || (!pg && c === '`') || (dialect === 'sqlite' && c === '[')) {
      const close = c === '[' ? ']' : c;
      const end = closing(sql, i, close, false);
      if (end < 0) return undefined;
      tokens.push({
        kind: 'quoted',
        text: sql
          .slice(i + 1, end - 1)
          .replaceAll(close + close, close)
          .toLowerCase(),
      });
      i = end;
    } else if (
      pg &&
      c === '$' &&
      /[A-Za-z_$]/.test(sql[i + 1] ?? '') &&
      /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.test(sql.slice(i, i + 66))
    ) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66))![0];
      const end = sql.indexOf(tag, i + tag.length);
      if (end < 0) return undefined;
      i = end + tag.length;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[j]!)) j += 1;
      tokens.push({ kind: 'word', text: sql.slice(i, j).toLowerCase() });
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < n && /[0-9.eE_a-fA-FxX]/.test(sql[j]!)) j += 1;
      i = j;
    } else if (c === ';') {
      tokens.push({ kind: 'semicolon', text: ';', at: i });
      i += 1;
    } else {
      tokens.push({ kind: 'symbol', text: c });
      i += 1;
    }
  }
  return tokens;
}

/**
 * Decodes PostgreSQL's Unicode escapes (`<e>XXXX`, `<e>+XXXXXX`, `<e><e>` for the escape character
 * `<e>`), as in `U&"…"` identifiers; undefined for an escape the server would reject.
 */
export function unicodeEscapes(body: string, escape: string): string | undefined {
  if (/^[0-9A-Fa-f+'"\s]$/.test(escape)) return undefined;
  let out = '';
  for (let i = 0; i < body.length;) {
    const c = body[i]!;
    if (c !== escape) {
      out += c;
      i += 1;
    } else if (body[i + 1] === escape) {
      out += escape;
      i += 2;
    } else {
      const long = body[i + 1] === '+';
      const hex = body.slice(i + (long ? 2 : 1), i + (long ? 8 : 5));
      if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== (long ? 6 : 4)) return undefined;
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff || code === 0) return undefined;
      out += String.fromCodePoint(code);
      i += long ? 8 : 5;
    }
  }
  return out; // two escapes spelling a surrogate pair join into one character, as on the server
}

/** The index just past the literal opened at `start` by its delimiter, or -1. */
function closing(sql: string, start: number, close: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (backslashEscapes && c === '\\') {
      i += 2;
      continue;
    }
    if (c === close) {
      if (sql[i + 1] === close && close !== ']') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i += 1;
  }
  return -1;
}
