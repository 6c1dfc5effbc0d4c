// A column's name is data: a column called `__proto__` is a column like any other in a table's
// rows, read through the built CLI with the real SDK client over stdio. Rows were once built by
// assigning each column, which for `__proto__` set the row's prototype instead: the column went
// missing from PostgreSQL's JSON rows, and SQLite's CSV printed `{}` for its values.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { PG_URL } from '../providers/sql-helpers.js';

const cleanup = new Cleanup();
afterAll(() => cleanup.run());

const CREATE = `CREATE TABLE t (id INTEGER PRIMARY KEY, "__proto__" TEXT, "constructor" TEXT, label TEXT)`;
const INSERT = `INSERT INTO t VALUES (1, '{"x":1}', 'c', 'a'), (2, NULL, NULL, 'b')`;
// Compared as text: an object literal's `__proto__` would set the expected row's prototype.
const ROWS_JSON =
  '[{"id":1,"__proto__":"{\\"x\\":1}","constructor":"c","label":"a"},{"id":2,"__proto__":null,"constructor":null,"label":"b"}]';

/** Serves the config `yaml` (written in `dir`) from the built CLI; returns the text `uri` reads as. */
async function serveAndRead(dir: string, yaml: string, uri: string): Promise<string> {
  writeFileSync(join(dir, 'reservoir.yaml'), yaml);
  const { client, stderr } = await connectStdio(
    '2025',
    [],
    ['--config', join(dir, 'reservoir.yaml')],
    cleanup,
  );
  const read = await client.readResource({ uri });
  const first = read.contents[0] as { text?: string };
  expect(first.text, stderr()).toBeTypeOf('string');
  return first.text!;
}

describe('a table with a column called __proto__', () => {
  it('reads that column in every SQLite row, as CSV and as JSON', async () => {
    await ensureBuilt();
    const dir = makeTempDir('reservoir-proto-columns-');
    cleanup.add(() => removeTree(dir));
    const Database = loadSqliteDriver();
    const db = new Database(join(dir, 't.db'));
    db.exec(`${CREATE}; ${INSERT};`);
    db.close();
    const csv = await serveAndRead(
      dir,
      'sources:\n  - type: sql\n    path: t.db\n    name: lite\n',
      'db://lite/tables/t/rows?format=csv',
    );
    expect(csv.split('\r\n').slice(0, 3)).toEqual([
      'id,__proto__,constructor,label',
      '1,"{""x"":1}",c,a',
      '2,,,b',
    ]);
    // as JSON too: SQLite's integers are converted, so each row is copied for its JSON form
    const text = await serveAndRead(
      dir,
      'sources:\n  - type: sql\n    path: t.db\n    name: lite\n',
      'db://lite/tables/t/rows',
    );
    expect(JSON.stringify((JSON.parse(text) as { rows: unknown[] }).rows)).toBe(ROWS_JSON);
  });

  it.skipIf(PG_URL === undefined || PG_URL === '')(
    'reads that column in every PostgreSQL row as JSON',
    async () => {
      await ensureBuilt();
      const schema = `proto_columns_${process.pid}_${Date.now().toString(36)}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      cleanup.add(async () => {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      });
      await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      await admin.query(`${CREATE}; ${INSERT}`);
      const dir = makeTempDir('reservoir-proto-columns-');
      cleanup.add(() => removeTree(dir));
      const text = await serveAndRead(
        dir,
        `sources:\n  - type: sql\n    url: ${PG_URL}\n    schema: ${schema}\n    name: pg\n`,
        'db://pg/tables/t/rows',
      );
      const doc = JSON.parse(text) as { columns: string[]; rows: unknown[] };
      expect(doc.columns).toEqual(['id', '__proto__', 'constructor', 'label']);
      expect(JSON.stringify(doc.rows)).toBe(ROWS_JSON);
    },
  );
});
