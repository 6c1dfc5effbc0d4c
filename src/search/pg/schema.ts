/**
 * The tables of one PostgreSQL index, in the configured schema, named after the index's key (the
 * indexed sources and the settings that shape the index), so every instance given the same
 * sources shares them. `docs` holds one row per resource — what a hit shows, what change detection
 * compares (the signature), its name and path as a weighted tsvector (name A, path B) — and points
 * at the text it holds in `blobs` (one row per text, its tsvector; a git blob listed at several
 * paths is stored once). GIN indexes serve matching, prefixes included (`:*`), with a short pending
 * list (PENDING_LIST_KB); a btree on each text's rank key (its score, then its id) lets a search
 * walk the texts in rank order (probe.ts), and `lexemes` keeps, for every lexeme any text has
 * held, the size of the shortest such text (sizes.ts): where a search's walk may start.
 *
 * Instances starting together create the tables once (under a transaction-level advisory lock); an
 * index written by a schema version the current tables only add to (UPGRADES) gains what it lacks,
 * one of any other version is dropped and rebuilt — each with one log line.
 */
import { createHash } from 'node:crypto';
import type PgNs from 'pg';
import type { Logger } from '../../core/log.js';

/** Bumped whenever the tables or the tokens change: an index of another version is rebuilt (or upgraded). */
export const PG_SCHEMA_VERSION = '6';

/**
 * Versions whose tables this version's only add to: their rows are kept and what is missing is
 * created — at a million texts, seconds instead of a rebuild. None now: version 4 added each
 * text's size lexemes to its vector and version 5 each lexeme's shortest text (sizes.ts), which
 * must cover every text for a search to trust them, and version 6 makes its words as SQLite's
 * tokenizer does to the code point (unicode61.ts: `й`, `ό` and Hangul kept, combining marks
 * separating), so an index of an earlier version is rebuilt.
 */
const UPGRADES: ReadonlySet<string> = new Set<string>([]);

/** The text length (bytes) at which a text match's score halves (visible.ts's). */
const HALF_SCORE_BYTES = 8192;

/**
 * A text's score from its size alone (float arithmetic, the same in every statement): -1 for an
 * empty text, towards 0 as it grows, so the shorter ranks first. `bytes` is the size column; the
 * rank index is built on this very expression, so a statement ordering by it walks that index.
 */
export function textScore(bytes: string): string {
  return `(-1 / (1 + ${bytes} / ${HALF_SCORE_BYTES}.0::float8))`;
}

/**
 * The most a GIN index's pending list (rows written but not yet merged into the index) holds, kB:
 * every query reads the whole list, and with autovacuum off nothing else empties it — PostgreSQL's
 * 4 MB default added tens of ms to each query after a build. A writer merges the list when it fills.
 */
const PENDING_LIST_KB = 256;

/** The quoted names of one index's tables. */
export interface Tables {
  schema: string;
  meta: string;
  docs: string;
  blobs: string;
  /** Each lexeme's shortest text, in bytes (sizes.ts). */
  lexemes: string;
  /** What advisory lock keys of this index are derived from. */
  namespace: string;
}

/** A double-quoted SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function tablesOf(schema: string, prefix: string): Tables {
  const table = (suffix: string): string => `${ident(schema)}.${ident(`${prefix}_${suffix}`)}`;
  return {
    schema: ident(schema),
    meta: table('meta'),
    docs: table('docs'),
    blobs: table('blobs'),
    lexemes: table('lexemes'),
    namespace: `${schema}.${prefix}`,
  };
}

/** The two 32-bit keys of the advisory lock named `name` within an index. */
export function lockKeys(namespace: string, name: string): [number, number] {
  const digest = createHash('sha256').update(`${namespace}\n${name}`).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

function ddl(t: Tables, prefix: string): string {
  const index = (suffix: string): string => ident(`${prefix}_${suffix}`);
  return `
CREATE TABLE IF NOT EXISTS ${t.meta} (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS ${t.blobs} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key text COLLATE "C" NOT NULL UNIQUE,
  bytes integer NOT NULL,
  body tsvector NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.docs} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  uri text COLLATE "C" NOT NULL UNIQUE,
  mount text COLLATE "C" NOT NULL,
  name text NOT NULL,
  title text,
  mime text,
  modified text,
  sig text NOT NULL,
  blob bigint,
  names tsvector NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.lexemes} (lexeme text COLLATE "C" PRIMARY KEY, bytes integer NOT NULL);
CREATE INDEX IF NOT EXISTS ${index('blobs_body')} ON ${t.blobs} USING gin (body) WITH (gin_pending_list_limit = ${PENDING_LIST_KB});
CREATE INDEX IF NOT EXISTS ${index('docs_names')} ON ${t.docs} USING gin (names) WITH (gin_pending_list_limit = ${PENDING_LIST_KB});
CREATE INDEX IF NOT EXISTS ${index('blobs_rank')} ON ${t.blobs} (${textScore('bytes')}, id);
CREATE INDEX IF NOT EXISTS ${index('docs_blob')} ON ${t.docs} (blob) WHERE blob IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${index('docs_mount')} ON ${t.docs} (mount);`;
}

/** Creates the index's tables when missing, or rebuilds them when another schema version wrote them. */
export async function ensureTables(
  client: PgNs.ClientBase,
  schema: string,
  prefix: string,
  logger: Logger,
): Promise<Tables> {
  const t = tablesOf(schema, prefix);
  await client.query('BEGIN');
  try {
    const [a, b] = lockKeys(t.namespace, 'schema');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [a, b]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${t.schema}`);
    const exists = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [
      `${t.schema}.${ident(`${prefix}_meta`)}`,
    ]);
    if (exists.rows[0]?.found !== null) {
      const version = await client.query<{ value: string }>(
        `SELECT value FROM ${t.meta} WHERE key = 'version'`,
      );
      const found = version.rows[0]?.value;
      if (found !== undefined && UPGRADES.has(found))
        logger.warn(
          { table: t.docs },
          `search index ${t.namespace} has schema version ${found}, expected ${PG_SCHEMA_VERSION}; adding what it lacks`,
        );
      else if (found !== PG_SCHEMA_VERSION) {
        logger.warn(
          { table: t.docs },
          `search index ${t.namespace} has schema version ${found ?? 'none'}, expected ${PG_SCHEMA_VERSION}; rebuilding it`,
        );
        await client.query(`DROP TABLE IF EXISTS ${t.docs}, ${t.blobs}, ${t.lexemes}, ${t.meta}`);
      }
    }
    await client.query(ddl(t, prefix));
    await client.query(
      `INSERT INTO ${t.meta} (key, value) VALUES ('version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [PG_SCHEMA_VERSION],
    );
    await client.query('COMMIT');
    return t;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
