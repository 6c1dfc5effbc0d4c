// Pins `reservoir check --connect`: after the summary, one line per source — `ok` with its latency,
// or `FAIL` with the source's own reason (a refused connection, a file that is not a database, a
// password removed from any URL it names) — and exit code 1 when any source cannot answer; exit 0
// when all can.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { checkConnect } from '../helpers/check-connect.js';
import { freePort } from '../helpers/ports.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const Database = loadSqliteDriver();

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir();
  writeTree(dir, {
    'docs/a.md': '# a\n',
    'broken.db': 'this is not a SQLite database '.repeat(200),
  });
  const db = new Database(join(dir, 'shop.db'));
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
  db.close();
});
afterAll(() => removeTree(dir));

describe('reservoir check --connect', () => {
  it('reports every source with its latency or its own failure, and exits 1 when one cannot answer', async () => {
    const port = await freePort();
    const config = join(dir, 'mixed.yaml');
    writeFileSync(
      config,
      [
        'sources:',
        '  - type: files',
        '    root: docs',
        '  - type: sql',
        '    name: shop',
        '    path: shop.db',
        '  - type: sql',
        '    name: broken',
        '    path: broken.db',
        '  - type: sql',
        '    name: remote',
        `    url: postgres://reader:hunter2@127.0.0.1:${port}/app`,
        '',
      ].join('\n'),
    );
    const run = await checkConnect(config);
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stdout.split('\n').filter(Boolean);
    expect(lines[0]).toContain('valid (4 sources');
    expect(lines).toHaveLength(5);
    expect(lines[1]).toMatch(/^ok {3}file:\/\/\/.*\/docs\/ +\d+ ms$/);
    expect(lines[2]).toMatch(/^ok {3}db:\/\/shop\/ +\d+ ms$/);
    expect(lines[3]).toMatch(/^FAIL db:\/\/broken\/ +.*not a database.* \(after \d+ ms\)$/);
    expect(lines[4]).toMatch(
      new RegExp(
        `^FAIL db://remote/ +.*ECONNREFUSED 127\\.0\\.0\\.1:${port}.* \\(after \\d+ ms\\)$`,
      ),
    );
    expect(run.stdout).not.toContain('hunter2');
  });

  it('exits 0 when every source answers', async () => {
    const config = join(dir, 'good.yaml');
    writeFileSync(
      config,
      'sources:\n  - type: files\n    root: docs\n  - type: sql\n    name: shop\n    path: shop.db\n',
    );
    const run = await checkConnect(config);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('ok '))).toHaveLength(2);
  });
});
