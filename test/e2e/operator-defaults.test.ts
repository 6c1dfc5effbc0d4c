// Issue 11, item 8 (the files and --git parts): what a careful operator expects of `reservoir serve`,
// through the built CLI and the real SDK client, over stdio and HTTP, in both eras.
//   - `serve --git REPO` with no roots serves the repository only, not the working directory.
//   - The config file, with its secrets, is never served from a root it lies in: not listed, not
//     read under any spelling (percent-encoding, dot segments, a symlink, a hard link, a line
//     range), not named in a directory read, not completed, not subscribable.
import { randomBytes } from 'node:crypto';
import { linkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { listAllPages, TARGETS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { makeRepo } from '../providers/git-helpers.js';
import { settle } from '../security/harness.js';
import { serveCli, type Served } from './serve-cli.js';

const ID = randomBytes(6).toString('hex');
const CONFIG_SECRET = `config-secret-${ID}`;

let cwd: string;
let repo: string;
let served: string;

beforeAll(async () => {
  await ensureBuilt();
  cwd = makeTempDir('reservoir-git-cwd-');
  writeTree(cwd, { 'cwd-file.txt': 'in the working directory\n' });
  repo = makeRepo({ 'README.md': '# repo\n' }, 'reservoir-git-only-');
  served = makeTempDir('reservoir-config-inside-');
  writeTree(served, {
    'notes.md': 'notes\n',
    'sub/inner.md': 'inner\n',
    'reservoir.yaml': [
      `# ${CONFIG_SECRET}`,
      'sources:',
      '  - { type: files, root: . }',
      'prompts:',
      '  - name: pick',
      '    arguments: [{ name: file, complete: path }]',
      '    messages: [{ role: user, text: "{{file}}" }]',
      '',
    ].join('\n'),
  });
  symlinkSync('reservoir.yaml', join(served, 'cfg-link.yaml'));
  symlinkSync('../reservoir.yaml', join(served, 'sub', 'up.yaml'));
  linkSync(join(served, 'reservoir.yaml'), join(served, 'copy.yaml'));
});

afterAll(() => {
  removeTree(cwd);
  removeTree(repo);
  removeTree(served);
});

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

describe.each(TARGETS)(
  'reservoir serve --git REPO without roots ($transport, $era era)',
  (target) => {
    it('serves only the repository, not the working directory', async () => {
      const served = await serveCli(target, { args: ['--git', repo], cwd });
      const { client } = served;
      try {
        const uris = (await listAllPages(client)).flatMap((page) =>
          page.resources.map((r) => r.uri),
        );
        expect(uris.length).toBeGreaterThan(0);
        expect(uris.filter((uri) => !uri.startsWith('git://'))).toEqual([]);
        const templates = (await client.listResourceTemplates()).resourceTemplates.map(
          (t) => t.uriTemplate,
        );
        expect(templates.filter((t) => t.startsWith('file:'))).toEqual([]);
        expect((await settle(client.readResource({ uri: fileUri(cwd, 'cwd-file.txt') }))).ok).toBe(
          false,
        );
      } finally {
        await served.close();
      }
    });
  },
);

describe.each(TARGETS)('the config file inside a served root ($transport, $era era)', (target) => {
  const era = target.era;
  let client: Client;
  let server: Served | undefined;

  beforeAll(async () => {
    // --allow-hardlinks: so the hard link copy.yaml is refused for being the config, not for its links.
    server = await serveCli(target, {
      args: ['--config', 'reservoir.yaml', '--allow-hardlinks'],
      cwd: served,
    });
    client = server.client;
  });

  afterAll(async () => {
    await server?.close();
  });

  const spellings = (): string[] => [
    fileUri(served, 'reservoir.yaml'),
    `${dirUri(served)}%72eservoir.yaml`,
    `${dirUri(served)}./reservoir.yaml`,
    `${dirUri(served)}sub/../reservoir.yaml`,
    `${dirUri(served)}sub/%2e%2e/reservoir.yaml`,
    fileUri(served, 'cfg-link.yaml'),
    fileUri(served, 'sub/up.yaml'),
    fileUri(served, 'copy.yaml'),
  ];

  it('lists everything else but never the config file, under any name', async () => {
    const uris = (await listAllPages(client)).flatMap((page) => page.resources.map((r) => r.uri));
    expect(uris).toContain(fileUri(served, 'notes.md'));
    expect(uris).toContain(fileUri(served, 'sub/inner.md'));
    expect(uris.filter((uri) => /reservoir\.yaml|cfg-link|up\.yaml|copy\.yaml/.test(uri))).toEqual(
      [],
    );
  });

  it('answers every spelling of the config file, and a line range of it, exactly like a missing file', async () => {
    const reference = await failure(client, fileUri(served, 'missing.yaml'));
    for (const uri of spellings()) expect(await failure(client, uri), uri).toEqual(reference);
    for (const uri of spellings()) {
      const ranged = await settle(client.readResource({ uri: `${uri}?lines=1-` }));
      expect(ranged.ok, uri).toBe(false);
      expect(JSON.stringify(ranged.ok ? ranged.value : ranged.error)).not.toContain(CONFIG_SECRET);
    }
    expect(
      (await client.readResource({ uri: fileUri(served, 'notes.md') })).contents[0],
    ).toMatchObject({ text: 'notes\n' });
  });

  it('names the config file in no directory read', async () => {
    const names = (uri: string): Promise<string[]> =>
      client
        .readResource({ uri })
        .then((r) =>
          (JSON.parse((r.contents[0] as { text: string }).text) as { name: string }[]).map(
            (c) => c.name,
          ),
        );
    expect(await names(dirUri(served))).toEqual(['notes.md', 'sub']);
    expect(await names(dirUri(served, 'sub'))).toEqual(['inner.md']);
  });

  it('offers the config file in no completion: template path nor prompt `path` argument', async () => {
    const template = `${dirUri(served)}{+path}`;
    const complete = async (value: string): Promise<string[]> =>
      (
        await client.complete({
          ref: { type: 'ref/resource', uri: template },
          argument: { name: 'path', value },
        })
      ).completion.values;
    expect(await complete('')).toEqual(['sub/', 'notes.md']);
    expect(await complete('res')).toEqual([]);
    expect(await complete('sub/')).toEqual(['sub/inner.md']);
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'pick' },
      argument: { name: 'file', value: '' },
    });
    expect(prompt.completion.values).toEqual(['sub/', 'notes.md']);
  });

  it('refuses a subscription to the config file', async () => {
    const uri = fileUri(served, 'reservoir.yaml');
    if (era === '2025') {
      expect((await settle(client.subscribeResource({ uri }))).ok).toBe(false);
    } else {
      const subscription = await client.listen({
        resourceSubscriptions: [uri, fileUri(served, 'notes.md')],
      });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual([
        fileUri(served, 'notes.md'),
      ]);
      await subscription.close();
    }
  });
});
