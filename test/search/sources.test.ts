// Which sources the index covers: files and git by default; a sql source only when `sources` names
// it (then what it lists — its schema and each table's first page of rows — is searchable); two
// processes' worth of services sharing one state directory build and search without corrupting it;
// an index of another schema version is rebuilt with one log line.
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/log.js';
import { silentLogger } from '../../src/core/log.js';
import { Registry } from '../../src/core/registry.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { SearchService } from '../../src/search/service.js';
import { ctx, removeDir, tempDir, writeTree } from '../providers/helpers.js';

const Database = loadSqliteDriver();

const dir = tempDir();
afterAll(() => removeDir(dir));

function notesDb(): string {
  const path = join(dir, 'notes.db');
  const db = new Database(path);
  db.exec(
    "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT); DELETE FROM notes; INSERT INTO notes (body) VALUES ('the axolotl hides'), ('a plain row')",
  );
  db.close();
  return path;
}

const uris = async (service: SearchService, query: string): Promise<string[]> =>
  (await service.search({ query, limit: 20 }, ctx())).hits.map((h) => h.uri);

describe('indexed sources', () => {
  it('leaves a sql source out by default and indexes what it lists when `sources` names it', async () => {
    const root = join(dir, 'files');
    writeTree(root, { 'a.md': 'an axolotl in a file\n' });
    const mount = (): Registry =>
      new Registry()
        .mount(filesProvider({ root }) as Provider)
        .mount(sqlProvider({ path: notesDb() }));
    const byDefault = mount();
    const plain = new SearchService(
      byDefault,
      { stateDir: join(dir, 'state-default') },
      silentLogger,
    );
    await plain.ready;
    expect(plain.sources()).toEqual(['files']);
    expect(await uris(plain, 'axolotl')).toEqual([expect.stringMatching(/^file:.*a\.md$/)]);
    await plain.close();
    await byDefault.close();

    const named = mount();
    const both = new SearchService(
      named,
      { stateDir: join(dir, 'state-named'), sources: ['files', 'notes'] },
      silentLogger,
    );
    await both.ready;
    expect(both.sources()).toEqual(['files', 'notes']);
    const found = await uris(both, 'axolotl');
    expect(found).toHaveLength(2);
    expect(found).toEqual(
      expect.arrayContaining([
        'db://notes/tables/notes/rows',
        expect.stringMatching(/^file:.*a\.md$/),
      ]),
    );
    expect(await uris(both, 'axolotl source:notes')).toEqual(['db://notes/tables/notes/rows']);
    await both.close();
    await named.close();
  });

  it('lets two services share one state directory: both build, both search, the file stays sound', async () => {
    const root = join(dir, 'shared');
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i += 1) files[`f${i}.txt`] = `file ${i} mentions the capybara\n`;
    writeTree(root, files);
    const state = join(dir, 'state-shared');
    const registries = [0, 1].map(() => new Registry().mount(filesProvider({ root }) as Provider));
    const services = registries.map(
      (registry) => new SearchService(registry, { stateDir: state }, silentLogger),
    );
    await Promise.all(services.map((s) => s.ready));
    for (const service of services)
      expect((await service.search({ query: 'capybara', limit: 100 }, ctx())).hits).toHaveLength(
        100,
      );
    expect((await services[0]!.totals()).docs).toBe(400);
    const file = services[0]!.file;
    for (const service of services) await service.close();
    for (const registry of registries) await registry.close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.prepare('SELECT count(*) FROM docs').pluck().get()).toBe(400);
    db.close();
  });

  it('rebuilds an index written by another schema version, with one log line', async () => {
    const root = join(dir, 'versioned');
    writeTree(root, { 'v.md': 'a tapir\n' });
    const state = join(dir, 'state-versioned');
    const first = new Registry().mount(filesProvider({ root }) as Provider);
    const service = new SearchService(first, { stateDir: state }, silentLogger);
    await service.ready;
    const file = service.file;
    await service.close();
    await first.close();
    const db = new Database(file);
    db.prepare("UPDATE meta SET value = '0' WHERE key = 'version'").run();
    db.close();
    const warnings: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    } as Logger;
    const again = new Registry().mount(filesProvider({ root }) as Provider);
    const rebuilt = new SearchService(again, { stateDir: state }, logger);
    await rebuilt.ready;
    expect(warnings).toEqual([
      expect.stringMatching(/is unusable \(index schema version 0, expected \d+\); rebuilding it$/),
    ]);
    expect(await uris(rebuilt, 'tapir')).toHaveLength(1);
    await rebuilt.close();
    await again.close();
  });
});
