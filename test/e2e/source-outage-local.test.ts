// One failing source never hides the others, for local sources: `reservoir serve --config` with a
// files root, a SQLite file and a git repository, through the real SDK client over stdio and HTTP in
// both eras. A corrupt SQLite file (replaced by garbage) and a vanished repository (moved away) are
// skipped with a `_meta` note naming each, the files are still listed, /readyz reports both, and
// both come back without a restart when the file and the repository are restored. `reservoir list`
// prints the rest, names what it left out and why on stderr, and exits 1.
import { execFile } from 'node:child_process';
import { copyFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  label,
  listAllPages,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { makeRepo } from '../providers/git-helpers.js';
import { removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { eventuallyAccepted } from '../helpers/eventually.js';

/** A source's state changes asynchronously (a probe, a backoff of up to 5 s): a generous deadline. */
const OUTAGE_WAIT = { deadlineMs: 30_000, stepMs: 50 };

const Database = loadSqliteDriver();

const META_KEY = 'reservoir/skippedSources';

async function listEverything(client: Client): Promise<{ uris: string[]; skipped: unknown[] }> {
  const pages = await listAllPages(client);
  return {
    uris: pages.flatMap((page) => page.resources.map((r) => r.uri)),
    skipped: pages.flatMap(
      (page) =>
        ((page._meta as Record<string, unknown> | undefined)?.[META_KEY] as
          unknown[] | undefined) ?? [],
    ),
  };
}

describe('a corrupt SQLite file and a vanished git repository never hide the other sources', () => {
  let dir: string;
  let repo: string;
  let config: string;
  let database: string;
  let goodCopy: string;

  beforeAll(() => {
    dir = tempDir('reservoir-outage-local-');
    writeTree(join(dir, 'docs'), { 'a.md': '# a\n', 'b.md': '# b\n' });
    database = join(dir, 'shop.db');
    const db = new Database(database);
    db.exec(
      `CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO items (label) VALUES ('apple');`,
    );
    db.close();
    goodCopy = join(dir, 'shop.db.good');
    copyFileSync(database, goodCopy);
    repo = makeRepo({ 'README.md': '# repo\n' }, 'reservoir-outage-git-');
    config = join(dir, 'reservoir.json');
    writeFileSync(
      config,
      JSON.stringify({
        sources: [
          { type: 'files', root: 'docs' },
          { type: 'sql', path: 'shop.db', name: 'shop' },
          { type: 'git', path: repo, name: 'repo' },
        ],
      }),
    );
  });

  afterAll(() => {
    removeDir(dir);
    removeDir(repo);
    removeDir(`${repo}-away`);
  });

  it('reservoir list prints the other sources, names the broken ones on stderr and exits 1', async () => {
    writeFileSync(`${database}.tmp`, 'this is not a SQLite database '.repeat(200));
    renameSync(`${database}.tmp`, database);
    renameSync(repo, `${repo}-away`);
    try {
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
        (resolve) => {
          execFile(
            process.execPath,
            [CLI_PATH, 'list', '--config', config],
            { timeout: 15_000 },
            (error, stdout, stderr) =>
              resolve({
                code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
                stdout,
                stderr,
              }),
          );
        },
      );
      expect(run.code).toBe(1);
      expect(
        run.stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split('\t')[0]),
      ).toEqual([expect.stringMatching(/\/docs\/a\.md$/), expect.stringMatching(/\/docs\/b\.md$/)]);
      // Each names its own failure, as /readyz and the log do, not just that it cannot answer.
      const lines = run.stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^reservoir list: left out db:\/\/shop\/: .*not a database.* \(unavailable\); its resources are missing$/,
      );
      expect(lines[1]).toMatch(
        /^reservoir list: left out git:\/\/repo\/: .+ \(unavailable\); its resources are missing$/,
      );
      expect(lines[1]).toContain('the repository is missing or not a git repository');
    } finally {
      copyFileSync(goodCopy, `${database}.tmp`);
      renameSync(`${database}.tmp`, database);
      renameSync(`${repo}-away`, repo);
    }
  });

  describe.each(TARGETS)('$transport $era', (target: Target) => {
    const cleanup = new Cleanup();
    let client: Client;
    let readyz:
      | (() => Promise<{
          status: number;
          body: { sources: { source: string; ready: boolean; reason?: string }[] };
        }>)
      | undefined;

    beforeAll(async () => {
      if (target.transport === 'stdio') {
        client = (await connectStdio(target.era, [], ['--config', config], cleanup)).client;
      } else {
        const server = await spawnHttpServer([], ['--config', config], cleanup);
        client = (await connectHttp(target.era, server.url, cleanup)).client;
        const url = new URL('/readyz', server.url);
        readyz = async () => {
          const response = await fetch(url);
          return { status: response.status, body: (await response.json()) as never };
        };
      }
    });

    afterAll(() => cleanup.run());

    it(`lists the files with a _meta note naming both broken sources, and lists them again once restored (${label(target)})`, async () => {
      // The git source's first list runs git several times right after the start: on a loaded
      // machine past its 2 s share of a page, and skipped for that page only.
      const all = await eventuallyAccepted(
        () => listEverything(client),
        (l) => l.skipped.length === 0,
        'a list with every source up',
        OUTAGE_WAIT,
      );
      expect(all.uris).toEqual(
        expect.arrayContaining(['db://shop/schema', 'git://repo/main/README.md']),
      );
      const files = all.uris.filter((uri) => uri.startsWith('file://'));
      expect(files).toHaveLength(2);

      // Garbage in place of the database (a new file, as an editor or a failed copy leaves it), and the repository gone.
      writeFileSync(`${database}.tmp`, 'this is not a SQLite database '.repeat(200));
      renameSync(`${database}.tmp`, database);
      renameSync(repo, `${repo}-away`);
      const broken = await eventuallyAccepted(
        () => listEverything(client),
        (l) => l.skipped.length === 2,
        'both sources to be skipped',
        OUTAGE_WAIT,
      );
      expect(broken.uris).toEqual(files);
      expect(broken.skipped).toEqual([
        { source: 'db://shop/', reason: 'unavailable' },
        { source: 'git://repo/', reason: 'unavailable' },
      ]);
      if (readyz !== undefined) {
        const report = await readyz();
        expect(report.status).toBe(503);
        expect(
          report.body.sources.filter((s) => !s.ready).map((s) => [s.source, s.reason]),
        ).toEqual([
          ['db://shop/', 'unavailable'],
          ['git://repo/', 'unavailable'],
        ]);
      }

      copyFileSync(goodCopy, `${database}.tmp`);
      renameSync(`${database}.tmp`, database);
      renameSync(`${repo}-away`, repo);
      const back = await eventuallyAccepted(
        () => listEverything(client),
        (l) => l.skipped.length === 0,
        'both sources to be listed again',
        OUTAGE_WAIT,
      );
      expect(back.uris).toEqual(all.uris);
      if (readyz !== undefined) expect((await readyz()).status).toBe(200);
    });
  });
});
