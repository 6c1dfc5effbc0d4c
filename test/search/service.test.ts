// The search service over a real Registry and files provider: ranking, filters, accents, CJK, the
// name and path, exclusions, binary and oversized files, paging behind sealed cursors, restart reuse,
// a corrupt index, and live updates fed by the provider's change detection.
import { drawn } from '../helpers/snippet.js';
import { appendFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from '../../src/core/registry.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { SearchService, type SearchPage, type SearchRequest } from '../../src/search/service.js';
import { SCHEMA_VERSION } from '../../src/search/store.js';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import type { Logger } from '../../src/core/log.js';
import { silentLogger } from '../../src/core/log.js';
import { ctx, fileUri, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { backends, dropBackends, type Backend } from './backends.js';

const Database = loadSqliteDriver();

let root: string;
let state: string;
const open: { registry: Registry; service: SearchService }[] = [];

const BACKENDS = backends();

function start(
  options: {
    logger?: Logger;
    maxFileBytes?: number;
    queryBudgetMs?: number;
    poll?: boolean;
    backend?: Backend;
  } = {},
): { registry: Registry; service: SearchService } {
  const watch = options.poll === true ? { mode: 'poll' as const, pollMs: 100 } : { settleMs: 10 };
  const registry = new Registry().mount(
    filesProvider({ root, exclude: ['secret/'], watch }) as Provider,
  );
  const settings = {
    stateDir: state,
    ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
    ...(options.queryBudgetMs === undefined ? {} : { queryBudgetMs: options.queryBudgetMs }),
    postgres: options.backend?.postgres,
  };
  const service = new SearchService(registry, settings, options.logger ?? silentLogger);
  const pair = { registry, service };
  open.push(pair);
  return pair;
}

async function stop(pair: { registry: Registry; service: SearchService }): Promise<void> {
  open.splice(open.indexOf(pair), 1);
  await pair.service.close();
  await pair.registry.close();
}

const search = (
  service: SearchService,
  query: string,
  more: Partial<SearchRequest> = {},
): Promise<SearchPage> => service.search({ query, limit: 20, ...more }, ctx());
const names = (page: SearchPage): string[] => page.hits.map((h) => h.name).sort();

beforeAll(() => {
  root = tempDir();
  state = tempDir('reservoir-state-');
  writeTree(root, {
    'docs/retry.md':
      '# Retries\n\nWe configure the retry budget in config/retry.yaml. The budget caps retries.\n',
    'docs/backoff.md': 'Backoff doubles each time; no budget here.\n',
    'docs/cafe.txt': 'Le café est servi à midi.\n',
    'docs/zh.md': '本系统支持资源订阅和全文搜索。\n',
    'docs/ja.md': 'このサーバーはリソースを購読できます。\n',
    'src/retry.ts': 'export const retryBudget = 3; // retry budget\n',
    'src/uniquename-zebra.ts': 'export {};\n',
    'secret/plan.md': 'the retry budget is secret\n',
    'bin/blob.bin': Buffer.from([0, 1, 2, 0xff, 0xfe, 0x72, 0x65, 0x74, 0x72, 0x79]),
    'big/huge.txt': `retry ${'x'.repeat(5000)}\n`,
  });
});

afterEach(async () => {
  for (const pair of [...open]) await stop(pair);
});

afterAll(async () => {
  removeDir(root);
  removeDir(state);
  await dropBackends(BACKENDS);
});

describe.each(BACKENDS)('a fresh index ($name)', (backend) => {
  it('finds every file holding both words, best first, with a snippet marking the match', async () => {
    const { service } = start({ backend });
    await service.ready;
    const page = await search(service, 'retry budget');
    expect(names(page)).toEqual(['retry.md', 'retry.ts']);
    const hit = page.hits.find((h) => h.name === 'retry.md')!;
    expect(hit.uri).toBe(fileUri(join(root, 'docs/retry.md')));
    expect(drawn(hit)).toContain('⟦retry⟧');
    expect(hit.mimeType).toBe('text/markdown');
    expect(hit.lastModified).toMatch(/^\d{4}-/);
    expect(hit.score).toBeGreaterThan(0);
    expect(page.indexing).toBeUndefined();
    // The index holds the words of every file: owner only.
    if (backend.name === 'sqlite') expect(statSync(service.file).mode & 0o777).toBe(0o600);
  });

  it('matches phrases, prefixes, OR and NOT', async () => {
    const { service } = start({ backend });
    await service.ready;
    expect(names(await search(service, '"retry budget"'))).toEqual(['retry.md', 'retry.ts']);
    expect(names(await search(service, '"budget retry"'))).toEqual([]);
    expect(names(await search(service, 'backo*'))).toEqual(['backoff.md']);
    expect(names(await search(service, 'backoff OR caps'))).toEqual(['backoff.md', 'retry.md']);
    expect(names(await search(service, 'budget NOT backoff'))).toEqual(['retry.md', 'retry.ts']);
  });

  it('is case- and diacritic-insensitive both ways', async () => {
    const { service } = start({ backend });
    await service.ready;
    expect(names(await search(service, 'CAFE'))).toEqual(['cafe.txt']);
    expect(names(await search(service, 'café'))).toEqual(['cafe.txt']);
    expect(drawn((await search(service, 'cafe')).hits[0]!)).toContain('⟦café⟧');
  });

  it('finds Chinese and Japanese text by each of its words', async () => {
    const { service } = start({ backend });
    await service.ready;
    expect(names(await search(service, '资源'))).toEqual(['zh.md']);
    expect(names(await search(service, '订阅'))).toEqual(['zh.md']);
    expect(names(await search(service, '资源订阅'))).toEqual(['zh.md']);
    expect(drawn((await search(service, '订阅')).hits[0]!)).toContain('⟦订阅⟧');
    expect(names(await search(service, '購読'))).toEqual(['ja.md']);
    // Katakana with voiced marks: バ stays バ on both sides (it once folded to ハ in queries only).
    expect(names(await search(service, 'サーバー'))).toEqual(['ja.md']);
  });

  it('finds a file by its name and by its path', async () => {
    const { service } = start({ backend });
    await service.ready;
    expect(names(await search(service, 'zebra'))).toEqual(['uniquename-zebra.ts']);
    expect(names(await search(service, 'uniquename*'))).toEqual(['uniquename-zebra.ts']);
  });

  it('leaves out excluded files, binary content and text over the byte cap (found by name only)', async () => {
    const { service } = start({ maxFileBytes: 1000, backend });
    await service.ready;
    const hits = names(await search(service, 'retry'));
    expect(hits).not.toContain('plan.md');
    expect(hits).not.toContain('blob.bin');
    expect(hits).not.toContain('huge.txt');
    expect(names(await search(service, 'huge'))).toEqual(['huge.txt']);
  });

  it('applies path:, mime:, source: and the under, mimeType and source arguments', async () => {
    const { service } = start({ backend });
    await service.ready;
    expect(names(await search(service, 'retry path:src/'))).toEqual(['retry.ts']);
    expect(names(await search(service, 'retry mime:text/markdown'))).toEqual(['retry.md']);
    expect(names(await search(service, 'retry', { mimeType: 'text/*' }))).toContain('retry.md');
    expect(
      names(await search(service, 'retry', { under: fileUri(join(root, 'docs')) + '/' })),
    ).toEqual(['retry.md']);
    const source = service.sources()[0]!;
    expect(names(await search(service, `budget source:${source}`))).toEqual([
      'backoff.md',
      'retry.md',
      'retry.ts',
    ]);
    await expect(search(service, 'retry source:nope')).rejects.toThrow(
      /no indexed source is named "nope"; the indexed sources are/,
    );
  });

  it('pages with sealed cursors that see every hit once, and refuses a cursor for another query', async () => {
    const { service } = start({ backend });
    await service.ready;
    const all = await search(service, 'budget');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search(service, 'budget', {
        limit: 1,
        ...(cursor === undefined ? {} : { cursor }),
      });
      seen.push(...page.hits.map((h) => h.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(all.hits.map((h) => h.uri));
    const first = await search(service, 'budget', { limit: 1 });
    await expect(search(service, 'retry', { limit: 1, cursor: first.nextCursor! })).rejects.toThrow(
      /Invalid cursor: cursor belongs to another list/,
    );
    await expect(
      search(service, 'budget', { limit: 1, cursor: `${first.nextCursor!}x` }),
    ).rejects.toThrow(/Invalid cursor/);
  });

  it('refuses a bad query as an invalid argument naming the column', async () => {
    const { service } = start({ backend });
    await expect(search(service, '"retry')).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('this quote is never closed (at column 1)'),
    });
  });
});

describe('across restarts', () => {
  it('reuses the index of an unchanged tree, reading nothing, and catches up on what changed while down', async () => {
    const first = start();
    await first.service.ready;
    await stop(first);
    writeFileSync(join(root, 'docs/added.md'), 'a pelican appeared while the server was down\n');
    rmSync(join(root, 'docs/backoff.md'));
    const second = start();
    const progress = second.service.progress();
    await second.service.ready;
    expect(progress.bytes).toBe(
      Buffer.byteLength('a pelican appeared while the server was down\n'),
    );
    expect(names(await search(second.service, 'pelican'))).toEqual(['added.md']);
    expect(names(await search(second.service, 'doubles'))).toEqual([]);
    writeFileSync(join(root, 'docs/backoff.md'), 'Backoff doubles each time; no budget here.\n');
    rmSync(join(root, 'docs/added.md'));
  });

  it('rebuilds a corrupt index file with one log line, and answers', async () => {
    const first = start();
    await first.service.ready;
    const file = first.service.file;
    await stop(first);
    for (const name of readdirSync(join(state, 'search'))) rmSync(join(state, 'search', name));
    writeFileSync(file, 'this is not a database '.repeat(100));
    const warnings: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    } as Logger;
    const second = start({ logger });
    await second.service.ready;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/is unusable .*; rebuilding it/);
    expect(names(await search(second.service, 'zebra'))).toEqual(['uniquename-zebra.ts']);
  });
});

describe('an index of another schema version', () => {
  it('is rebuilt with one log line naming the version, and answers', async () => {
    const first = start();
    await first.service.ready;
    const file = first.service.file;
    await stop(first);
    const db = new Database(file);
    db.prepare("UPDATE meta SET value = '1' WHERE key = 'version'").run();
    db.close();
    const warnings: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    } as Logger;
    const second = start({ logger });
    await second.service.ready;
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(`index schema version 1, expected ${SCHEMA_VERSION}\\); rebuilding it$`),
      ),
    ]);
    expect(names(await search(second.service, 'zebra'))).toEqual(['uniquename-zebra.ts']);
    expect(second.service.writes().docsWritten).toBeGreaterThan(0);
  });
});

describe('the query budget', () => {
  it('answers a search whose index queries outrun it with an invalid-argument error asking for a narrower query, and the next search within it', async () => {
    const { service: tight } = start({ queryBudgetMs: 0 });
    await tight.ready;
    await expect(search(tight, 'retr*')).rejects.toMatchObject({
      code: 'invalid_argument',
      data: { argument: 'query', budgetMs: 0 },
      message: expect.stringMatching(
        /^Invalid argument 'query': "retr\*" matches too much to be ranked within the search's 0 ms budget: narrow it \(longer prefixes, fewer OR terms, or a path:, mime: or source: filter\)$/,
      ),
    });
    const { service } = start();
    expect(names(await search(service, 'retr*'))).toContain('retry.md');
  });
});

describe('a deleted index', () => {
  it('is noticed by the next search, rebuilt with one log line, and answers again', async () => {
    const warnings: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    } as Logger;
    const { service } = start({ logger });
    await service.ready;
    for (const name of readdirSync(join(state, 'search'))) rmSync(join(state, 'search', name));
    const during = await search(service, 'zebra');
    expect(warnings).toEqual([expect.stringMatching(/was deleted; rebuilding it$/)]);
    expect(during.indexing).toBeDefined();
    await service.ready;
    expect(names(await search(service, 'zebra'))).toEqual(['uniquename-zebra.ts']);
    expect(warnings).toHaveLength(1);
  });
});

describe.each(BACKENDS)('live ($name)', (backend) => {
  it.each([
    ['the native watcher', false],
    ['the polling fallback (--watch poll)', true],
  ])(
    'makes a write, a new file, a rename and a delete searchable as %s reports them',
    async (_label, poll) => {
      const { service } = start({ poll, backend });
      await service.ready;
      const settled = async (check: () => Promise<boolean>): Promise<void> => {
        // Changes arrive from the watcher; the feeder reports each batch it applies. Listen before
        // checking, so a batch applied during the check is not missed.
        for (;;) {
          let off = (): void => undefined;
          const next = new Promise<void>(
            (resolve) => (off = service.onProgress(resolve) as () => void),
          );
          const done = await check();
          if (done) return off();
          await next;
          off();
        }
      };
      appendFileSync(join(root, 'docs/cafe.txt'), 'Flamingo.\n');
      await settled(async () => names(await search(service, 'flamingo')).length === 1);
      writeFileSync(join(root, 'docs/new.md'), 'an ocelot\n');
      await settled(async () => names(await search(service, 'ocelot')).length === 1);
      renameSync(join(root, 'docs/new.md'), join(root, 'docs/renamed.md'));
      await settled(async () => names(await search(service, 'ocelot')).join() === 'renamed.md');
      rmSync(join(root, 'docs/renamed.md'));
      await settled(async () => (await search(service, 'ocelot')).hits.length === 0);
      writeFileSync(join(root, 'docs/cafe.txt'), 'Le café est servi à midi.\n');
    },
  );

  it('absorbs a burst of 5,000 new files while searches keep being answered', async () => {
    const { service } = start({ backend });
    await service.ready;
    const burst = join(root, 'burst');
    const files: Record<string, string> = {};
    for (let i = 0; i < 5000; i += 1)
      files[`d${i % 50}/f${i}.txt`] = `burst file ${i} of the wombat checkout\n`;
    writeTree(burst, files);
    // How many of the burst were indexed when each search was answered.
    const answeredAt: number[] = [];
    const before = (await service.totals()).docs;
    while ((await service.totals()).docs < before + 5000) {
      const next = new Promise<void>((resolve) => {
        const off = service.onProgress(() => {
          off();
          resolve();
        });
      });
      await search(service, 'wombat', { limit: 100 });
      answeredAt.push((await service.totals()).docs - before);
      if ((await service.totals()).docs < before + 5000) await next;
    }
    expect((await search(service, 'wombat', { limit: 100 })).hits).toHaveLength(100);
    expect(answeredAt.length).toBeGreaterThan(1);
    // Searches are answered between slices of the feeder's work, not held until the whole burst is in:
    // some answer came while part of the burst was indexed and part was not.
    expect(answeredAt.some((done) => done > 0 && done < 5000)).toBe(true);
    rmSync(burst, { recursive: true, force: true });
  }, 60_000);
});
