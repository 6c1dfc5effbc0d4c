// Issue 24, item 2: what Reservoir keeps is never served. Through the built CLI and the real SDK
// client, a served root that holds the state directory (search index with its WAL/SHM, cursor key),
// the TLS key and certificate or the secret file shows none of them — not in a list, a read of any
// spelling, a directory read, a completion, a subscription or a search — whichever way the path is
// named: the default state dir under a served HOME, a state dir given through a symlink or a
// relative path, a hard link to the secret file, a symlink to the TLS key. The client here is the
// local user, who may read everything else: a scoped user sees less.
import { linkSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { listAllPages, TARGETS, type Target } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { serveCli, type Served } from '../e2e/serve-cli.js';
import { settle } from './harness.js';

const WORD = 'quokka';
const SECRET = 'wombatsecret';

interface Scenario {
  name: string;
  targets: readonly Target[];
  /** Makes the files; returns how to serve them and what must stay hidden. */
  setup(base: string): {
    root: string;
    args: string[];
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    /** Reserved spellings (relative to the root) that must read like missing files. */
    spellings: () => string[];
    /** Directories (relative) whose reads and completions must not name `names`. */
    parents: string[];
    names: RegExp;
  };
}

const stdioOnly = TARGETS.filter((t) => t.transport === 'stdio');

const SCENARIOS: Scenario[] = [
  {
    name: 'the default state dir under a served HOME',
    targets: TARGETS,
    setup(base) {
      const home = join(base, 'home');
      writeTree(home, {
        'notes.md': `${WORD} notes\n`,
        '.cache/other/keep.txt': `${WORD} cached\n`,
      });
      symlinkSync('.cache/reservoir', join(home, 'state-link'));
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
      delete env['XDG_CACHE_HOME'];
      return {
        root: home,
        args: [home],
        env,
        spellings: () => [
          ...stateSpellings(home, '.cache/reservoir'),
          ...stateSpellings(home, 'state-link'),
          '.cache/other/../reservoir/cursor.key',
        ],
        parents: ['', '.cache'],
        names: /reservoir|state-link|cursor\.key|index-/,
      };
    },
  },
  {
    name: 'a state dir given through a symlink, and a hard link to the secret file',
    targets: stdioOnly,
    setup(base) {
      const root = join(base, 'served');
      writeTree(root, { 'notes.md': `${WORD} notes\n`, 'kept/.keep': '' });
      writeTree(base, { 'outside/secret': `${SECRET} ${'s'.repeat(40)}\n` });
      symlinkSync(join(root, 'kept'), join(base, 'outside', 'state-link'));
      linkSync(join(base, 'outside', 'secret'), join(root, 'copy.txt'));
      return {
        root,
        // --allow-hardlinks: copy.txt is refused for being the secret file, not for its links.
        args: [
          root,
          '--state-dir',
          join(base, 'outside', 'state-link'),
          '--secret-file',
          join(base, 'outside', 'secret'),
          '--allow-hardlinks',
        ],
        spellings: () => [
          'copy.txt',
          './copy.txt',
          'kept/sub/../copy.txt',
          ...stateSpellings(root, 'kept'),
        ],
        parents: ['', 'kept'],
        names: /copy\.txt|kept|index-|\.keep/,
      };
    },
  },
  {
    name: 'a state dir given as a relative path',
    targets: stdioOnly,
    setup(base) {
      const root = join(base, 'served');
      writeTree(root, { 'notes.md': `${WORD} notes\n`, 'var/log.txt': `${WORD} log\n` });
      return {
        root,
        cwd: root,
        args: ['.', '--state-dir', './var/../var/state'],
        spellings: () => stateSpellings(root, 'var/state'),
        parents: ['', 'var'],
        names: /state|cursor|index-/,
      };
    },
  },
  {
    name: 'the TLS key and certificate inside the root, and a symlink to the key',
    targets: stdioOnly,
    setup(base) {
      const root = join(base, 'served');
      const state = join(base, 'state');
      writeTree(root, {
        'notes.md': `${WORD} notes\n`,
        'tls/key.pem': `${SECRET} key\n`,
        'tls/cert.pem': `${SECRET} cert\n`,
        'tls/readme.txt': `${WORD}\n`,
      });
      symlinkSync('tls/key.pem', join(root, 'k.pem'));
      symlinkSync('../tls', join(root, 'tls', 'loop'));
      mkdirSync(join(root, 'sub'));
      symlinkSync('../tls', join(root, 'sub', 'tls-dir'));
      // Over stdio the pair is only named (HTTPS needs --http); it is reserved all the same.
      return {
        root,
        args: [
          root,
          '--tls-cert',
          join(root, 'tls', 'cert.pem'),
          '--tls-key',
          join(root, 'tls', 'key.pem'),
          '--state-dir',
          state,
        ],
        spellings: () => [
          'tls/key.pem',
          'tls/cert.pem',
          'k.pem',
          'tls/%6bey.pem',
          'sub/tls-dir/key.pem',
          'tls/loop/cert.pem',
          'sub/../tls/./key.pem',
        ],
        parents: ['', 'tls', 'sub/tls-dir'],
        names: /key\.pem|cert\.pem|k\.pem/,
      };
    },
  },
];

/** Spellings of what lies in a state directory at `rel`: itself, the cursor key, the index files. */
function stateSpellings(root: string, rel: string): string[] {
  const out = [`${rel}/`, `${rel}/cursor.key`, `${rel}/search/`];
  let names: string[] = [];
  try {
    names = readdirSync(join(root, ...rel.split('/'), 'search'));
  } catch {
    // no index (yet): the directory's own spellings still count
  }
  for (const name of names)
    out.push(
      `${rel}/search/${name}`,
      `${rel}/./search/${encodeURIComponent(name).replace('i', '%69')}`,
    );
  return out;
}

/** A read's failure with its URI replaced, so different URIs' answers compare. */
async function failure(client: Client, uri: string): Promise<Record<string, unknown>> {
  const outcome = await settle(client.readResource({ uri }));
  expect(outcome.ok, uri).toBe(false);
  const error = (outcome.ok ? {} : outcome.error) as {
    code?: number;
    message?: string;
    data?: unknown;
  };
  return JSON.parse(
    JSON.stringify({ code: error.code, message: error.message, data: error.data }).replaceAll(
      uri,
      '<uri>',
    ),
  ) as Record<string, unknown>;
}

/** Searches until the first build is done (it answers from a partial index meanwhile). */
async function search(client: Client, query: string): Promise<{ hits: { uri: string }[] }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const result = (await client.callTool({
      name: 'search_resources',
      arguments: { query, limit: 100 },
    })) as CallToolResult;
    expect(result.isError ?? false).toBe(false);
    const page = result.structuredContent as { hits: { uri: string }[]; indexing?: unknown };
    if (page.indexing === undefined || Date.now() > deadline) return page;
  }
}

/** The URI of `rel` below the root spelled as written: dot segments and percent-escapes kept. */
const uriOf = (root: string, rel: string): string => `${dirUri(root)}${rel}`;

beforeAll(async () => {
  await ensureBuilt();
});

describe.each(SCENARIOS)('$name', (scenario) => {
  describe.each(scenario.targets)('$transport, $era era', (target) => {
    let base: string;
    let served: Served | undefined;
    let client: Client;
    let setup: ReturnType<Scenario['setup']>;

    beforeAll(async () => {
      base = makeTempDir('reservoir-reserved-');
      setup = scenario.setup(base);
      served = await serveCli(target, {
        args: setup.args,
        ...(setup.cwd === undefined ? {} : { cwd: setup.cwd }),
        ...(setup.env === undefined ? {} : { env: setup.env }),
      });
      client = served.client;
      // The index is built first, so its files exist while everything else is asked.
      expect((await search(client, WORD)).hits.length).toBeGreaterThan(0);
    });

    afterAll(async () => {
      await served?.close();
      removeTree(base);
    });

    it('finds only served files in search, and nothing for what only the kept files hold', async () => {
      const hits = (await search(client, WORD)).hits.map((h) => h.uri);
      expect(hits).toContain(fileUri(setup.root, 'notes.md'));
      expect(hits.filter((uri) => setup.names.test(uri.slice(dirUri(setup.root).length)))).toEqual(
        [],
      );
      expect((await search(client, SECRET)).hits).toEqual([]);
      // The index's own words would be everywhere in it: no hit is a file of the state directory.
      expect(
        (await search(client, 'sqlite OR fts5 OR cursor')).hits.filter((h) =>
          /index-|cursor\.key/.test(h.uri),
        ),
      ).toEqual([]);
    });

    it('lists everything else but nothing kept, under any name', async () => {
      const uris = (await listAllPages(client)).flatMap((page) => page.resources.map((r) => r.uri));
      expect(uris).toContain(fileUri(setup.root, 'notes.md'));
      expect(uris.filter((uri) => setup.names.test(uri.slice(dirUri(setup.root).length)))).toEqual(
        [],
      );
    });

    it('answers every spelling of what is kept exactly like a missing file', async () => {
      const reference = await failure(client, fileUri(setup.root, 'missing.txt'));
      const spellings = setup.spellings();
      expect(spellings.length).toBeGreaterThan(2);
      for (const rel of spellings) {
        const uri = uriOf(setup.root, rel);
        if (uri.endsWith('/'))
          expect((await settle(client.readResource({ uri }))).ok, uri).toBe(false);
        else expect(await failure(client, uri), uri).toEqual(reference);
      }
      expect(
        (await client.readResource({ uri: fileUri(setup.root, 'notes.md') })).contents[0],
      ).toMatchObject({ text: `${WORD} notes\n` });
    });

    it('names nothing kept in a directory read or a completion', async () => {
      for (const parent of setup.parents) {
        const read = await settle(client.readResource({ uri: dirUri(setup.root, parent) }));
        if (read.ok) {
          const names = (
            JSON.parse((read.value.contents[0] as { text: string }).text) as { name: string }[]
          ).map((c) => c.name);
          expect(
            names.filter((name) => setup.names.test(name)),
            parent,
          ).toEqual([]);
        }
        const prefix = parent === '' ? '' : `${parent}/`;
        for (const typed of [prefix, `${prefix}.`]) {
          const template = `${dirUri(setup.root)}{+path}`;
          const values = (
            await client.complete({
              ref: { type: 'ref/resource', uri: template },
              argument: { name: 'path', value: typed },
            })
          ).completion.values;
          expect(
            values.filter((value) => setup.names.test(value.slice(prefix.length))),
            typed,
          ).toEqual([]);
        }
      }
    });

    it('refuses a subscription to anything kept', async () => {
      const kept = setup.spellings().map((rel) => uriOf(setup.root, rel));
      if (target.era === '2025') {
        for (const uri of kept)
          expect((await settle(client.subscribeResource({ uri }))).ok, uri).toBe(false);
      } else {
        const notes = fileUri(setup.root, 'notes.md');
        const subscription = await client.listen({ resourceSubscriptions: [...kept, notes] });
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual([notes]);
        await subscription.close();
      }
    });
  });
});
