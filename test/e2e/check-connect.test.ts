// Pins `reservoir check --connect`: after the summary, one line per source — `ok` with its latency,
// or `FAIL` with the source's own reason (a refused connection, a file that is not a database, a
// password removed from any URL it names) — and exit code 1 when any source cannot answer; exit 0
// when all can. An HTTP source is asked its upstream: its first listed endpoint read as a client
// reads it, or, with none listed, its base URL, where any answer counts.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  it('asks an HTTP source its upstream: a refused connection or a refused endpoint fails, an answer of any status at a base URL with no listed endpoint does not', async () => {
    const upstream: Server = createServer((request, response) => {
      if (request.url === '/api/status') response.writeHead(200).end('{"up":true}');
      else if (request.url === '/locked/status') response.writeHead(401).end('no');
      else response.writeHead(404).end('nothing here');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const live = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const closed = `http://127.0.0.1:${await freePort()}`;
    const source = (name: string, base: string, uri: string): string[] => [
      '  - type: http',
      `    name: ${name}`,
      `    baseUrl: ${base}`,
      '    allowPrivateNetworks: true',
      '    timeoutMs: 5000',
      `    endpoints: [{ name: e, uri: "${uri}", upstream: "${uri}" }]`,
    ];
    const config = join(dir, 'http.yaml');
    writeFileSync(
      config,
      [
        'sources:',
        ...source('up', `${live}/api/`, 'status'),
        ...source('locked', `${live}/locked/`, 'status'),
        ...source('down', `${closed}/api/`, 'status'),
        ...source('templated', `${live}/api/`, 'items/{id}'),
        ...source('gone', `${closed}/api/`, 'items/{id}'),
        '',
      ].join('\n'),
    );
    try {
      const run = await checkConnect(config);
      expect(run.code, run.stderr).toBe(1);
      const lines = run.stdout.split('\n').filter(Boolean);
      expect(lines.slice(1)).toEqual([
        expect.stringMatching(/^ok {3}api:\/\/up\/ +\d+ ms$/),
        expect.stringMatching(/^FAIL api:\/\/locked\/ +.*401.* \(after \d+ ms\)$/),
        expect.stringMatching(/^FAIL api:\/\/down\/ +.*ECONNREFUSED.* \(after \d+ ms\)$/),
        expect.stringMatching(/^ok {3}api:\/\/templated\/ +\d+ ms$/),
        expect.stringMatching(/^FAIL api:\/\/gone\/ +.*ECONNREFUSED.* \(after \d+ ms\)$/),
      ]);
    } finally {
      await new Promise((resolve) => upstream.close(resolve));
    }
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
