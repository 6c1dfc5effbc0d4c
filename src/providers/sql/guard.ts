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

/** Words that, outside literals, make a statement something other than a plain read. */
const REFUSED_WORDS = new Set([
  // writes inside one statement: data-modifying CTEs, SELECT INTO, INSERT OR REPLACE INTO
  'insert',
  'update',
  'delete',
  'merge',
  'upsert',
  'into',
  // statement keywords that have no place in a read (cheap to refuse; rare as bare column names)
  'create',
  'alter',
  'drop',
  'truncate',
  'grant',
  'revoke',
  'copy',
  'call',
  'do',
  'execute',
  'prepare',
  'deallocate',
  'listen',
  'unlisten',
  'notify',
  'vacuum',
  'reindex',
  'cluster',
  'refresh',
  'discard',
  'commit',
  'rollback',
  'savepoint',
  'checkpoint',
  'attach',
  'detach',
  'pragma',
]);

/** MySQL / MariaDB words refused beside those: file and lock clauses (INTO OUTFILE is caught by INTO). */
const MYSQL_REFUSED_WORDS = new Set([
  'load',
  'handler',
  'lock',
  'outfile',
  'dumpfile',
  'kill',
  'flush',
  'rename',
  'xa',
]);

/** MySQL / MariaDB functions that wait, take locks, read server files or move sequences. */
const MYSQL_REFUSED_FUNCTIONS = new Set([
  'sleep',
  'benchmark',
  'get_lock',
  'release_lock',
  'release_all_locks',
  'load_file',
  'master_pos_wait',
  'source_pos_wait',
  'master_gtid_wait',
  'wait_for_executed_gtid_set',
  'wait_until_sql_thread_after_gtids',
  'nextval',
  'setval',
  'lastval',
  'sys_exec',
  'sys_eval',
  'last_insert_id',
]);

/** Function names (exact) with side effects or reach outside the database. */
const REFUSED_FUNCTIONS = new Set([
  'set_config',
  'nextval',
  'setval',
  'txid_current',
  'pg_current_xact_id',
  'pg_notify',
  'load_extension',
  'readfile',
  'writefile',
  'edit',
  'fts3_tokenizer',
  'query_to_xml',
  'query_to_xml_and_xmlschema',
  'query_to_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'table_to_xml',
  'table_to_xml_and_xmlschema',
  'schema_to_xml',
  'schema_to_xml_and_xmlschema',
  'database_to_xml',
  'database_to_xml_and_xmlschema',
  'lowrite',
  'loread',
]);

/** Function name prefixes refused the same way. */
const REFUSED_PREFIXES = [
  'pg_sleep',
  'pg_terminate',
  'pg_cancel',
  'pg_signal',
  'pg_reload',
  'pg_rotate',
  'pg_promote',
  'pg_switch',
  'pg_create',
  'pg_drop',
  'pg_backup',
  'pg_start_backup',
  'pg_stop_backup',
  'pg_read',
  'pg_ls_',
  'pg_stat_file',
  'pg_file',
  'pg_logical',
  'pg_replication',
  'pg_advisory',
  'pg_try_advisory',
  'pg_stat_reset',
  'pg_import',
  'pg_log_',
  'pg_wal_replay',
  'pg_copy',
  'lo_',
  'dblink',
];

/**
 * Whose lexical rules apply. They differ where a mismatch would hide text from the check: only
 * PostgreSQL has `E'…'` (backslash escapes), `$tag$…$tag$`, `U&"…"` and nested block comments; only
 * SQLite has `[…]` and backtick identifiers (to PostgreSQL `[` is a subscript, inside which a quote
 * opens a string).
 */
export type SqlDialect = 'postgres' | 'sqlite' | 'mysql';

export interface GuardVerdict {
  ok: boolean;
  reason?: string;
}

/** Checks `sql` lexically; `ok: false` carries a reason a model can act on. */
export function checkStatement(sql: string, dialect: SqlDialect = 'postgres'): GuardVerdict {
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

interface Token {
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
function tokenize(sql: string, dialect: SqlDialect): Token[] | undefined {
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
