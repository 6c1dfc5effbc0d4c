// Pins `reservoir check --connect`: after the summary, one line per source — `ok` with its latency,
// or `FAIL` with the source's own reason (a refused connection, a file that is not a database, a
// password removed from any URL it names) — and exit code 1 when any source cannot answer; exit 0
// when all can.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
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

/** A port nothing listens on: bound, then closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function check(config: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, 'check', '--connect', '--config', config],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}

describe('reservoir check --connect', () => {
  it('reports every source with its latency or its own failure, and exits 1 when one cannot answer', async () => {
    const port = await closedPort();
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
    const run = await check(config);
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
    const run = await check(config);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('ok '))).toHaveLength(2);
  });
});
