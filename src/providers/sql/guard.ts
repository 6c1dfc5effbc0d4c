/**
 * A lexical pre-check of `sql_query` statements: defence in depth, never the guarantee. The
 * guarantees are the database's own (a read-only transaction always rolled back, one statement per
 * Parse, a statement timeout, a role without privileges; a read-only file and `query_only` on
 * SQLite, in a process that is killed at the deadline). This check only turns the obvious cases
 * into clear refusals before anything reaches the database: it strips comments and string
 * literals, then requires one statement starting with SELECT, WITH, VALUES or TABLE, and refuses
 * words that write, change the session or reach outside the database.
 *
 * MySQL / MariaDB are lexed as the session the dialect opens lexes them (mysql-connect.ts sets a
 * `sql_mode` without ANSI_QUOTES and NO_BACKSLASH_ESCAPES): `"…"` is a string, backslash escapes
 * inside strings, backtick identifiers, `#` comments, `-- ` comments only before a blank, block
 * comments unnested. Executable comments (`/*! … *\/`, `/*M! … *\/`) run their text on the server,
 * so a statement with one is refused outright; so are user-variable assignments (`@x := …`).
 */
import {
  MYSQL_REFUSED_FUNCTIONS,
  MYSQL_REFUSED_WORDS,
  REFUSED_FUNCTIONS,
  REFUSED_PREFIXES,
  REFUSED_WORDS,
} from './guard-words.js';
import { rememberRecent } from '../../core/memo.js';
import { tokenize, type SqlDialect } from './sql-lexer.js';

export interface GuardVerdict {
  ok: boolean;
  reason?: string;
}

/**
 * Verdicts by dialect and statement text (core/memo.ts), for statements up to KEPT_TEXT characters:
 * both checks are pure functions of the two, and a named query or a client's repeated statement is
 * lexed once instead of on every call.
 */
const KEPT_TEXT = 4096;
const KEPT_VERDICTS = 256;

/** `judge` remembered per dialect, keyed by the statement's text. */
function byDialect<T>(
  judge: (sql: string, dialect: SqlDialect) => T,
): (sql: string, dialect: SqlDialect) => T {
  const kept = new Map<SqlDialect, (sql: string) => T>();
  return (sql, dialect) => {
    let remembered = kept.get(dialect);
    if (remembered === undefined) {
      remembered = rememberRecent((text) => judge(text, dialect), {
        entries: KEPT_VERDICTS,
        maxKeyLength: KEPT_TEXT,
      });
      kept.set(dialect, remembered);
    }
    return remembered(sql);
  };
}

const checked = byDialect(judgeStatement);
const wrapped = byDialect(judgeWrap);

/** Checks `sql` lexically; `ok: false` carries a reason a model can act on. */
export function checkStatement(sql: string, dialect: SqlDialect = 'postgres'): GuardVerdict {
  return checked(sql, dialect);
}

function judgeStatement(sql: string, dialect: SqlDialect): GuardVerdict {
  const tokens = tokenize(sql, dialect);
  if (tokens === undefined)
    return refuse('the statement has an unterminated string, identifier or comment');
  const semicolon = tokens.findIndex((t) => t.kind === 'semicolon');
  if (semicolon >= 0 && tokens.slice(semicolon + 1).some((t) => t.kind !== 'semicolon')) {
    return refuse('only one statement may run (found more after a ";")');
  }
  const first = tokens.find((t) => t.kind === 'word' || t.kind === 'symbol');
  if (first === undefined) return refuse('the statement is empty');
  if (first.kind !== 'word' || !['select', 'with', 'values', 'table'].includes(first.text)) {
    return refuse('only SELECT, WITH … SELECT, VALUES and TABLE statements may run');
  }
  const mysql = dialect === 'mysql';
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.kind === 'executable')
      return refuse(
        'executable comments (/*! … */, /*M! … */) are not allowed: their text runs on the server',
      );
    if (mysql && token.kind === 'symbol' && token.text === ':' && tokens[i + 1]?.text === '=')
      return refuse('assigning user variables (@x := …) is not allowed in a read-only query');
    if (mysql && token.kind === 'word' && MYSQL_REFUSED_WORDS.has(token.text))
      return refuse(`"${token.text.toUpperCase()}" is not allowed in a read-only query`);
    if (
      mysql &&
      (token.kind === 'word' || token.kind === 'quoted') &&
      MYSQL_REFUSED_FUNCTIONS.has(token.text)
    ) {
      return refuse(
        `the function ${token.text} waits, takes locks, reads server files or changes state`,
      );
    }
    if (token.kind === 'word' && REFUSED_WORDS.has(token.text))
      return refuse(`"${token.text.toUpperCase()}" is not allowed in a read-only query`);
    if (
      token.kind === 'word' &&
      token.text === 'for' &&
      ['update', 'share', 'no', 'key'].includes(tokens[i + 1]?.text ?? '')
    ) {
      return refuse('row locks (FOR UPDATE / FOR SHARE) are not allowed in a read-only query');
    }
    if (token.kind === 'word' || token.kind === 'quoted') {
      const name = token.text;
      if (REFUSED_FUNCTIONS.has(name) || REFUSED_PREFIXES.some((p) => name.startsWith(p))) {
        return refuse(`the function ${name} has side effects or reaches outside the database`);
      }
    }
  }
  return { ok: true };
}

/**
 * The statement ready to be wrapped as a subquery (budget.ts): without its trailing `;` and what
 * follows it (comments, more semicolons). Undefined, with the reason, when it cannot be wrapped
 * safely: unreadable, more than one statement, or parentheses that do not balance (a statement
 * that closes the wrapper's parenthesis could reach around it).
 */
export function wrappable(sql: string, dialect: SqlDialect): { body: string } | { reason: string } {
  return wrapped(sql, dialect);
}

function judgeWrap(sql: string, dialect: SqlDialect): { body: string } | { reason: string } {
  const tokens = tokenize(sql, dialect);
  if (tokens === undefined)
    return { reason: 'the statement has an unterminated string, identifier or comment' };
  if (tokens.some((t) => t.kind === 'executable'))
    return { reason: 'executable comments (/*! … */) are not allowed' };
  const semicolon = tokens.findIndex((t) => t.kind === 'semicolon');
  if (semicolon >= 0 && tokens.slice(semicolon + 1).some((t) => t.kind !== 'semicolon'))
    return { reason: 'only one statement may run (found more after a ";")' };
  let depth = 0;
  for (const token of tokens) {
    if (token.kind === 'symbol' && token.text === '(') depth += 1;
    if (token.kind === 'symbol' && token.text === ')') depth -= 1;
    if (depth < 0) break;
  }
  if (depth !== 0) return { reason: 'the statement’s parentheses do not balance' };
  return { body: semicolon < 0 ? sql : sql.slice(0, tokens[semicolon]!.at) };
}

function refuse(reason: string): GuardVerdict {
  return { ok: false, reason };
}
