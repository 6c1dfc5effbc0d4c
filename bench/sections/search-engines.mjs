/**
 * The two index engines side by side (issue 30, item 6): SQLite FTS5 (one file per instance) and
 * PostgreSQL full-text search (shared by a cluster), fed the same generated documents (~1 KiB of
 * Zipf-spread pseudo-words, planted words and phrases, Chinese in 1%) through their index writers
 * in the feeder's batches of 500, then queried through the same backend interface the search
 * service uses (20 ranked rows; no snippets, no access checks: the engine alone):
 *
 *   - build: documents/s and MB/s of text written, and the index size (file, or tables + indexes);
 *   - query p50/p99 for one word, two words, a phrase, a prefix, a CJK word;
 *   - PostgreSQL only: an instance that joins (connect, open the tables, first query answered).
 *
 * 100,000 documents by default; --million adds the 1,000,000-document rows (minutes to build).
 * PostgreSQL rows need RESERVOIR_BENCH_PG or RESERVOIR_TEST_PG (e.g. postgres://postgres@127.0.0.1:5432/test);
 * the tables live in a schema of their own, dropped at the end — or, with
 * RESERVOIR_BENCH_PG_KEEP=SCHEMA, kept in SCHEMA and queried again by the next run without a
 * build (1M documents take ~20 min to build; an index of an older schema version is upgraded or
 * rebuilt by PgBackend.open as any index is, one left half-built is built again). The words of the
 * queries spread over known shares of the texts; the planted ones (budget, quorum, …) lengthen the
 * texts they are put in, so they are only in texts longer than every text without them.
 * RESERVOIR_BENCH_ENGINES=postgres (or sqlite) runs one engine alone.
 *
 * Usage: npm run bench -- --only search-engines [--million]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmtInt, fmtMB, fmtMs, percentile, printTable } from '../lib/stats.mjs';
import { seeded, words } from '../lib/pseudo-words.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const BATCH = 500;
const REPS = 100;
const ROOT = 'file:///bench/';
const QUERIES = [
  { kind: 'one word', query: 'budget' },
  { kind: 'word in 1%', query: 'quorum' },
  { kind: 'word in 0.3%', query: 'harbor' },
  { kind: 'word in 0.1%', query: 'ledger' },
  { kind: 'word in 0.01%', query: 'sentinel' },
  // Pseudo-words of the Zipf-spread vocabulary (seeded: the same in every run), in texts of every size.
  { kind: 'vocabulary word in 9%', query: 'midorshi' },
  { kind: 'vocabulary word in 3%', query: 'quoostost' },
  { kind: 'vocabulary word in 1%', query: 'posel' },
  { kind: 'two words', query: 'retry budget' },
  { kind: 'phrase', query: '"retry budget"' },
  { kind: 'prefix', query: 'configur*' },
  { kind: 'CJK word', query: '订阅' },
];

export async function searchEnginesSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const pgUrl = process.env.RESERVOIR_BENCH_PG ?? process.env.RESERVOIR_TEST_PG ?? '';
  const dist = (path) => import(pathToFileURL(join(repoRoot, 'dist', path)).href);
  const lib = {
    ...(await dist('search/sqlite-backend.js')),
    ...(await dist('search/pg/backend.js')),
    ...(await dist('search/document.js')),
    ...(await dist('search/segment.js')),
    ...(await dist('search/query.js')),
  };
  const sizes = [100_000, ...(ctx.opts?.million === true ? [1_000_000] : [])];
  if (ctx.opts?.million !== true)
    progress('search-engines: the 1M-document rows need --million (minutes to build)');
  if (pgUrl === '')
    progress(
      'search-engines: RESERVOIR_BENCH_PG / RESERVOIR_TEST_PG not set: PostgreSQL rows skipped',
    );
  const only = process.env.RESERVOIR_BENCH_ENGINES?.split(',');
  const keep = process.env.RESERVOIR_BENCH_PG_KEEP ?? '';
  const builds = [];
  const queries = [];
  for (const size of sizes) {
    const engines = ['sqlite', ...(pgUrl === '' ? [] : ['postgres'])].filter(
      (engine) => only === undefined || only.includes(engine),
    );
    for (const engine of engines) {
      const result = await benchEngine(lib, engine, size, pgUrl, progress, keep);
      builds.push([
        engine,
        fmtInt(size),
        result.buildMs === undefined ? 'kept' : `${(result.buildMs / 1000).toFixed(1)} s`,
        result.buildMs === undefined ? '—' : fmtInt(size / (result.buildMs / 1000)),
        result.buildMs === undefined
          ? '—'
          : (result.textBytes / 1e6 / (result.buildMs / 1000)).toFixed(1),
        fmtMB(result.indexBytes),
        result.joinMs === undefined ? '—' : fmtMs(result.joinMs),
      ]);
      for (const q of result.queries)
        queries.push([engine, fmtInt(size), q.kind, fmtInt(q.hits), fmtMs(q.p50), fmtMs(q.p99)]);
      if (engine === 'postgres') {
        const worst = Math.max(...result.queries.map((q) => q.p99));
        if (size === 1_000_000)
          target('PostgreSQL index query p99 at 1M documents ≤ 30 ms', fmtMs(worst), worst <= 30);
      }
    }
  }
  printTable(
    'Search engines — build (index writers, batches of 500)',
    ['engine', 'documents', 'time', 'docs/s', 'MB/s text', 'index size', 'joiner: first answer'],
    builds,
  );
  printTable(
    'Search engines — query (20 ranked rows, engine alone)',
    ['engine', 'documents', 'query', 'matches ≥', 'p50', 'p99'],
    queries,
  );
}

async function benchEngine(lib, engine, size, pgUrl, progress, keepPg) {
  const logger = { error() {}, warn() {}, info() {}, debug() {} };
  const segmenter = new lib.Segmenter();
  const keep = keepPg !== '' && engine === 'postgres';
  // A kept index is found again by its schema and size; one of an older schema version is
  // upgraded or rebuilt by PgBackend.open, as any index is.
  const key = keep ? `keep${size}` : randomBytes(6).toString('hex');
  const schema = keep ? keepPg : `reservoir_bench_${key}`;
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-engines-'));
  const settings = { url: pgUrl, schema, leaseTickMs: 60_000 };
  let backend =
    engine === 'sqlite'
      ? new lib.SqliteBackend(join(dir, 'index.sqlite'), logger)
      : await lib.PgBackend.open(settings, key, [ROOT], logger);
  const result = { queries: [] };
  try {
    const kept = keep && Number((await backend.totals()).docs) === size;
    if (keep && !kept && !(await backend.isEmpty())) {
      // A kept index left half-built: start it again (the schema's other kept indexes stay).
      await backend.close();
      await dropTables(pgUrl, schema, key);
      backend = await lib.PgBackend.open(settings, key, [ROOT], logger);
    }
    if (kept) progress(`search-engines: ${engine} ${fmtInt(size)} kept in ${schema}`);
    else await build(lib, backend, engine, size, progress, segmenter, result);
    if (!kept)
      result.indexBytes =
        engine === 'sqlite' ? dirBytes(dir) : await tableBytes(backend, schema, pgUrl);
    else result.indexBytes = await tableBytes(backend, schema, pgUrl);
    if (engine === 'postgres') {
      // Analyze what was just loaded, as autovacuum would soon: the planner then knows the tables.
      if (!kept) await analyze(pgUrl, schema);
      // An instance that joins: it connects, finds the tables, and answers.
      const joinStarted = performance.now();
      const joiner = await lib.PgBackend.open(settings, key, [ROOT], logger);
      await rows(lib, joiner, QUERIES[0].query, segmenter);
      result.joinMs = performance.now() - joinStarted;
      await joiner.close();
    }
    for (const { kind, query } of QUERIES) {
      await rows(lib, backend, query, segmenter);
      const times = [];
      let hits = 0;
      for (let i = 0; i < REPS; i += 1) {
        const t0 = performance.now();
        hits = await rows(lib, backend, query, segmenter);
        times.push(performance.now() - t0);
      }
      result.queries.push({ kind, hits, p50: percentile(times, 50), p99: percentile(times, 99) });
    }
  } finally {
    await backend.close();
    backend = undefined;
    rmSync(dir, { recursive: true, force: true });
    if (engine === 'postgres' && !keep) await dropSchema(pgUrl, schema);
  }
  return result;
}

/** Feeds `size` generated documents to `backend` through its index writer, in the feeder's batches. */
async function build(lib, backend, engine, size, progress, segmenter, result) {
  let textBytes = 0;
  const started = performance.now();
  const random = seeded(13);
  const vocabulary = words(random, 20_000);
  for (let at = 0; at < size; at += BATCH) {
    const docs = [];
    for (let index = at; index < Math.min(size, at + BATCH); index += 1) {
      const text = documentText(index, random, vocabulary);
      textBytes += Buffer.byteLength(text);
      const d = String(Math.floor(index / 100)).padStart(5, '0');
      const name = `f${String(index).padStart(7, '0')}.txt`;
      const uri = `${ROOT}d${d}/${name}`;
      docs.push(
        lib.buildDoc({ uri, name, mimeType: 'text/plain' }, ROOT, `s:${index}`, segmenter, {
          key: `uri:${uri}`,
          text,
        }),
      );
    }
    await backend.writer.write(docs, []);
    if ((at / BATCH) % 200 === 199)
      progress(`search-engines: ${engine} ${fmtInt(at + BATCH)} of ${fmtInt(size)} documents`);
  }
  result.buildMs = performance.now() - started;
  result.textBytes = textBytes;
  progress(
    `search-engines: ${engine} ${fmtInt(size)} built in ${(result.buildMs / 1000).toFixed(1)} s`,
  );
}

/** Reads the first 21 ranked rows of `query` (a page of 20 and whether there is more). */
async function rows(lib, backend, query, segmenter) {
  const parsed = lib.parseQuery(query, segmenter);
  const run = {
    match: parsed.match,
    tree: parsed.tree,
    where: { sql: '', params: [] },
    deadline: Date.now() + 60_000,
    signal: new AbortController().signal,
    query,
  };
  const { rows } = await backend.matches(run, { kind: 'all' }, undefined, 21, false);
  let count = 0;
  for await (const _row of rows) if (++count === 21) break;
  return count;
}

function documentText(index, random, vocabulary) {
  const zipf = (n) => vocabulary[Math.min(n - 1, Math.floor(Math.pow(random(), 2.2) * n))];
  const parts = [];
  let length = 0;
  while (length < 1000) {
    const word = zipf(vocabulary.length);
    parts.push(word);
    length += word.length + 1;
  }
  if (index % 97 === 0) parts.splice(20, 0, 'the', 'retry', 'budget', 'is', 'set', 'here');
  if (index % 13 === 0) parts.splice(40, 0, 'budget');
  if (index % 7 === 0) parts.splice(60, 0, 'retry');
  if (index % 50 === 0)
    parts.splice(80, 0, ['configure', 'configured', 'configuration'][index % 3]);
  if (index % 100 === 3) parts.splice(10, 0, '本系统支持资源订阅和全文搜索。');
  // Words of known spread (none is a pseudo-word: those are made of the syllables in words()).
  if (index % 101 === 29) parts.splice(30, 0, 'quorum');
  if (index % 331 === 41) parts.splice(50, 0, 'harbor');
  if (index % 1009 === 17) parts.splice(70, 0, 'ledger');
  if (index % 10007 === 11) parts.splice(90, 0, 'sentinel');
  return `${parts.join(' ')}\n`;
}

async function pgClient(url) {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

async function analyze(url, schema) {
  const client = await pgClient(url);
  try {
    const { rows } = await client.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [
      schema,
    ]);
    for (const { tablename } of rows) await client.query(`ANALYZE "${schema}"."${tablename}"`);
  } finally {
    await client.end();
  }
}

async function tableBytes(_backend, schema, url) {
  const client = await pgClient(url);
  try {
    const { rows } = await client.query(
      'SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = $2',
      [schema, 'r'],
    );
    return Number(rows[0].bytes);
  } finally {
    await client.end();
  }
}

async function dropTables(url, schema, key) {
  const client = await pgClient(url);
  try {
    const table = (suffix) => `"${schema}"."index_${key}_${suffix}"`;
    await client.query(
      `DROP TABLE IF EXISTS ${table('docs')}, ${table('blobs')}, ${table('meta')}`,
    );
  } finally {
    await client.end();
  }
}

async function dropSchema(url, schema) {
  const client = await pgClient(url);
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * The ceiling: SQLite FTS5 used directly, the way a program indexing files itself would — every
 * file under `root` read and inserted in one transaction through prepared statements, into the
 * index shape Reservoir's texts have (a rowid table of paths, a contentless FTS5 table of bodies,
 * the same tokenizer; CJK runs segmented the same way, or the CJK query would find nothing).
 * Returns the build's wall time, text bytes and index bytes, and a `query(words)` over it (20
 * ranked paths, as a search's page).
 */
export async function rawFts5Build(root, file) {
  const dist = (path) => import(pathToFileURL(join(repoRoot, 'dist', path)).href);
  const { loadSqliteDriver } = await dist('core/sqlite-driver.js');
  const { Segmenter } = await dist('search/segment.js');
  const segmenter = new Segmenter();
  const Driver = loadSqliteDriver();
  rmSync(file, { force: true });
  const started = performance.now();
  const db = new Driver(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
    CREATE VIRTUAL TABLE texts USING fts5(body, content = '', contentless_delete = 1,
      tokenize = 'unicode61 remove_diacritics 2');`);
  const insertDoc = db.prepare('INSERT INTO docs (path) VALUES (?)');
  const insertText = db.prepare('INSERT INTO texts (rowid, body) VALUES (?, ?)');
  let textBytes = 0;
  let files = 0;
  db.transaction(() => {
    const walk = (dir) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) {
          const text = readFileSync(path, 'utf8');
          textBytes += Buffer.byteLength(text);
          files += 1;
          const { lastInsertRowid } = insertDoc.run(path);
          insertText.run(lastInsertRowid, segmenter.segment(text));
        }
      }
    };
    walk(root);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  const ms = performance.now() - started;
  const indexBytes = statSync(file).size;
  const select = db.prepare(
    'SELECT d.path, texts.rank FROM texts JOIN docs d ON d.id = texts.rowid WHERE texts MATCH ? ORDER BY texts.rank LIMIT 21',
  );
  const { parseQuery } = await dist('search/query.js');
  return {
    ms,
    files,
    textBytes,
    indexBytes,
    /** The first 21 ranked paths of `query`, parsed as Reservoir parses it. */
    query: (query) => select.all(parseQuery(query, segmenter).match).length,
    close: () => {
      db.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    },
  };
}

/** p50 and p99 of `reps` runs of `fn` (after one warm-up run), and what it returned. */
export async function timed(fn, reps) {
  let result = await fn();
  const times = [];
  for (let i = 0; i < reps; i += 1) {
    const t0 = performance.now();
    result = await fn();
    times.push(performance.now() - t0);
  }
  return { result, p50: percentile(times, 50), p99: percentile(times, 99) };
}

function dirBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}
