// The ranked stream of a PostgreSQL index (RESERVOIR_TEST_PG; skipped with a message when unset):
// every document whose name or path matches comes before every document whose text alone does,
// text matches come shortest text first (a text two documents share once per document), and a
// page resumed after any row — a name match or a text match, through the stream's own pages or a
// caller's position — goes on with exactly the rows that followed it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDoc } from '../../src/search/document.js';
import type { PgBackend } from '../../src/search/pg/backend.js';
import type { Position, Row } from '../../src/search/rows.js';
import { Segmenter } from '../../src/search/segment.js';
import { openPgIndex, PG_URL, searchRun, testSchema } from './backends.js';

const SCHEMA = testSchema();
const ROOT = 'file:///ranking/';
const segmenter = new Segmenter();
let backend: PgBackend;

async function read(query: string, after?: Position, want = 50): Promise<Row[]> {
  const { rows } = await backend.matches(searchRun(query), { kind: 'all' }, after, want, false);
  const found: Row[] = [];
  for await (const row of rows) found.push(row);
  return found;
}

const positionOf = (row: Row): Position => [row.score, row.blob, row.id];

describe.skipIf(PG_URL === '')('the ranking of a PostgreSQL index', () => {
  beforeAll(async () => {
    ({ backend } = await openPgIndex(SCHEMA, ROOT));
    const doc = (path: string, text: string, key = `uri:${ROOT}${path}`) =>
      buildDoc(
        { uri: `${ROOT}${path}`, name: path.split('/').pop()! },
        ROOT,
        `s:${path}`,
        segmenter,
        {
          key,
          text,
        },
      );
    const docs = [
      doc('heron.md', 'a grey bird'),
      doc('heron-notes.md', 'heron heron heron'),
      doc('birds/heron/list.md', 'egret'),
    ];
    // Texts of different sizes, written in no order of size; two documents share one text.
    for (let i = 0; i < 24; i += 1)
      docs.push(doc(`t${i}.md`, `the heron ${'x '.repeat(((i * 7) % 24) * 50 + 20)}`));
    docs.push(doc('shared-a.md', 'a heron twice', 'id:shared'));
    docs.push(doc('shared-b.md', 'a heron twice', 'id:shared'));
    docs.push(doc('egret.md', 'no such bird here'));
    await backend.writer.write(docs, []);
  });

  afterAll(async () => {
    await backend?.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client.end();
  });

  it('ranks name and path matches above every text match, then texts shortest first', async () => {
    const rows = await read('heron');
    expect(rows).toHaveLength(3 + 24 + 2);
    const names = rows.slice(0, 3);
    expect(names.every((r) => r.blob === 0)).toBe(true);
    expect(names.map((r) => r.name).sort()).toEqual(['heron-notes.md', 'heron.md', 'list.md']);
    const texts = rows.slice(3);
    expect(texts.every((r) => r.blob !== 0)).toBe(true);
    for (let i = 1; i < texts.length; i += 1)
      expect(texts[i]!.score).toBeGreaterThanOrEqual(texts[i - 1]!.score);
    // The shared text is the shortest: its two documents come first, next to each other.
    expect(texts.slice(0, 2).map((r) => r.name)).toEqual(['shared-a.md', 'shared-b.md']);
    expect(texts[0]!.blob).toBe(texts[1]!.blob);
  });

  it('reads the same rows through pages of one row as in one page', async () => {
    expect(await read('heron', undefined, 1)).toEqual(await read('heron'));
  });

  it('resumes after any row with exactly the rows that followed it', async () => {
    const all = await read('heron');
    for (let at = 0; at < all.length; at += 1)
      expect(await read('heron', positionOf(all[at]!), 2)).toEqual(all.slice(at + 1));
  });

  it('finds text matches alone when no name matches, and names alone when no text does', async () => {
    expect((await read('twice')).map((r) => r.name)).toEqual(['shared-a.md', 'shared-b.md']);
    expect((await read('list')).map((r) => r.name)).toEqual(['list.md']);
  });
});

if (PG_URL === '')
  console.log(
    'RESERVOIR_TEST_PG is not set: the PostgreSQL ranking tests are skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test)',
  );
