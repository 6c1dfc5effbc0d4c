// Issue 11, item 2: the leaks inside providers' answers, end to end. A real HTTP socket, the real SDK
// client in both eras, a bearer token whose rules deny docs/secret/** and one git file. Through
// every answer that names other URIs — prompt-argument `path` completion, template completion
// through a symlinked directory, lists and directory reads holding symlinks, a git commit's files
// and diff, a path's history — nothing of what is denied appears: no name, no content, no size. A
// commit that changed only denied files is in no history, its view and subscription are answered
// like a missing commit's, and its message appears nowhere.
// An admin token sees it all (so every refusal below is the rules' doing).
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePrompts } from '../../src/config/prompts.js';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ERAS, listAllPages } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { commit, makeRepo } from '../providers/git-helpers.js';
import { closeClient, connectWithToken, errorCode, makeToken, settle } from './harness.js';

const ID = randomBytes(6).toString('hex');
const SECRET = `SECRET-${ID}`;
/** The denied file's size: long enough that no other file here has it. */
const SECRET_BODY = `${SECRET}\n${'x'.repeat(4321)}\n`;

const reader = makeToken('reader', ['reader']);
const admin = makeToken('admin', ['admin']);

let base: string;
let repoDir: string;
let docsUri: string;
let privateUri: string;
let gitRoot: string;
let secondCommit: string;
/** Changes only the denied file. */
let hiddenCommit: string;
/** Changes nothing. */
let emptyCommit: string;
const HIDDEN_MESSAGE = `rotate the key to HIDDEN-${ID}`;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;

beforeAll(async () => {
  base = makeTempDir('reservoir-provider-leaks-');
  writeTree(base, {
    'docs/guide.md': 'the guide\n',
    'docs/secret/key.txt': SECRET_BODY,
    'docs/secret/inner/deep.txt': `${SECRET} deep\n`,
    'private/p.txt': 'private\n',
  });
  symlinkSync('secret', join(base, 'docs', 'alias'));
  symlinkSync('secret/key.txt', join(base, 'docs', 'pointer.txt'));
  symlinkSync('guide.md', join(base, 'docs', 'ok-link.md'));
  mkdirSync(join(base, 'docs', 'sub'));
  symlinkSync('../secret/key.txt', join(base, 'docs', 'sub', 'deep-pointer.txt'));
  docsUri = dirUri(join(base, 'docs'));
  privateUri = dirUri(join(base, 'private'));

  repoDir = makeRepo(
    { 'public.md': 'public v1\n', 'secret.txt': `${SECRET} v1\n` },
    'reservoir-leaks-git-',
  );
  secondCommit = commit(
    repoDir,
    { 'public.md': 'public v2\n', 'secret.txt': `${SECRET} v2\n` },
    'touch both',
  );
  hiddenCommit = commit(repoDir, { 'secret.txt': `${SECRET} v3\n` }, HIDDEN_MESSAGE);
  emptyCommit = commit(repoDir, {}, 'nothing changed');
  const git = gitProvider({ path: repoDir, name: `leaks-${ID}` });
  gitRoot = git.root;

  const rules = [
    {
      scopes: ['reader'],
      allow: [`${docsUri}**`, `${gitRoot}**`, 'prompt:*'],
      deny: [`${docsUri}secret/**`, `${gitRoot}*/secret.txt`],
    },
    { scopes: ['admin'], allow: ['file:///**', `${gitRoot}**`, 'prompt:*'] },
  ];
  reservoir = createReservoir({
    providers: [
      filesProvider({ root: join(base, 'docs') }),
      filesProvider({ root: join(base, 'private') }),
      git,
    ],
    access: new AccessPolicy({ rules }),
  });
  for (const prompt of compilePrompts(
    [
      {
        name: 'pick',
        arguments: [{ name: 'file', complete: 'path' }],
        messages: [{ role: 'user', text: 'Look at {{file}}' }],
      },
    ],
    { baseDir: base, registry: reservoir.registry },
  )) {
    reservoir.prompts.add(prompt);
  }
  endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: [reader, admin].map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
    }),
  });
});

afterAll(async () => {
  await reservoir?.close();
  removeTree(base);
  removeTree(repoDir);
});

async function completePrompt(client: Client, value: string): Promise<string[]> {
  return (
    await client.complete({
      ref: { type: 'ref/prompt', name: 'pick' },
      argument: { name: 'file', value },
    })
  ).completion.values;
}

async function completePath(client: Client, value: string): Promise<string[]> {
  return (
    await client.complete({
      ref: { type: 'ref/resource', uri: `${docsUri}{+path}` },
      argument: { name: 'path', value },
    })
  ).completion.values;
}

function textOf(result: { contents: unknown[] }): string {
  return (result.contents[0] as { text: string }).text;
}

describe.each(ERAS)('provider answers under access rules (%s era, HTTP)', (era) => {
  let client: Client;
  let adminClient: Client;

  beforeAll(async () => {
    client = await connectWithToken(era, endpoint.url, reader.token);
    adminClient = await connectWithToken(era, endpoint.url, admin.token);
  });

  afterAll(async () => {
    await closeClient(client);
    await closeClient(adminClient);
  });

  it('completes a `complete: path` prompt argument without roots the caller cannot see', async () => {
    expect(await completePrompt(client, '')).toEqual(['docs/']);
    expect(await completePrompt(client, 'pri')).toEqual([]);
    expect(await completePrompt(client, 'private/')).toEqual([]);
    expect(await completePrompt(adminClient, '')).toEqual(['docs/', 'private/']);
    // The same root's own template is not offered to this caller either.
    const template = await settle(
      client.complete({
        ref: { type: 'ref/resource', uri: `${privateUri}{+path}` },
        argument: { name: 'path', value: '' },
      }),
    );
    expect(template.ok).toBe(false);
  });

  it('completes a `complete: path` prompt argument without names from denied directories, or links into them', async () => {
    const values = await completePrompt(client, 'docs/');
    expect(values).toContain('docs/guide.md');
    expect(values).toContain('docs/ok-link.md');
    expect(values.filter((v) => /secret|alias|pointer/.test(v))).toEqual([]);
    expect(await completePrompt(client, 'docs/secret/')).toEqual([]);
    expect(await completePrompt(client, 'docs/alias/')).toEqual([]);
    expect(await completePrompt(client, 'docs/alias/k')).toEqual([]);
    expect(await completePrompt(adminClient, 'docs/alias/')).toEqual([
      'docs/alias/inner/',
      'docs/alias/key.txt',
    ]);
  });

  it('completes a template path through a symlinked directory with nothing from the denied directory it leads to', async () => {
    expect(await completePath(client, 'alias/')).toEqual([]);
    expect(await completePath(client, 'alias/in')).toEqual([]);
    expect(await completePath(client, 'alias/inner/')).toEqual([]);
    const top = await completePath(client, '');
    expect(top).toContain('guide.md');
    expect(top.filter((v) => /secret|alias|pointer/.test(v))).toEqual([]);
    expect(await completePath(client, 'sub/')).toEqual([]);
    expect(await completePath(adminClient, 'alias/')).toEqual(['alias/inner/', 'alias/key.txt']);
  });

  it('lists no symlink whose target the caller may not read, so neither its size nor its date shows', async () => {
    const items = (await listAllPages(client)).flatMap((page) => page.resources);
    const uris = items.map((item) => item.uri);
    expect(uris).toContain(`${docsUri}guide.md`);
    expect(uris).toContain(`${docsUri}ok-link.md`);
    expect(
      uris.filter((uri) => uri.startsWith(docsUri) && /secret|alias|pointer/.test(uri)),
    ).toEqual([]);
    expect(items.some((item) => item.size === SECRET_BODY.length)).toBe(false);
    const adminUris = (await listAllPages(adminClient))
      .flatMap((page) => page.resources)
      .map((item) => item.uri);
    expect(adminUris).toContain(`${docsUri}pointer.txt`);
    expect(adminUris).toContain(`${docsUri}sub/deep-pointer.txt`);
  });

  it('reads a directory without children that are symlinks to what the caller may not read', async () => {
    const children = JSON.parse(textOf(await client.readResource({ uri: docsUri }))) as {
      name: string;
      size?: number;
    }[];
    expect(children.map((c) => c.name)).toEqual(['guide.md', 'ok-link.md', 'sub']);
    const sub = JSON.parse(
      textOf(await client.readResource({ uri: `${docsUri}sub/` })),
    ) as unknown[];
    expect(sub).toEqual([]);
    const adminChildren = JSON.parse(textOf(await adminClient.readResource({ uri: docsUri }))) as {
      name: string;
      size?: number;
    }[];
    expect(adminChildren.find((c) => c.name === 'pointer.txt')?.size).toBe(SECRET_BODY.length);
    expect(adminChildren.map((c) => c.name)).toContain('alias');
  });

  it('leaves a denied git file out of a commit view: neither in `files` nor in the diff', async () => {
    const view = JSON.parse(
      textOf(await client.readResource({ uri: `${gitRoot}commits/${secondCommit}` })),
    ) as {
      files: { path: string }[];
      diff: string;
    };
    expect(view.files.map((f) => f.path)).toEqual(['public.md']);
    expect(view.diff).toContain('+public v2');
    expect(view.diff).not.toContain('secret.txt');
    expect(view.diff).not.toContain(SECRET);
    const full = JSON.parse(
      textOf(await adminClient.readResource({ uri: `${gitRoot}commits/${secondCommit}` })),
    ) as {
      files: { path: string }[];
      diff: string;
    };
    expect(full.files.map((f) => f.path)).toEqual(['public.md', 'secret.txt']);
    expect(full.diff).toContain(`+${SECRET} v2`);
  });

  it('answers the history of a denied git file as not found, and the history of an allowed one', async () => {
    // Answered exactly as a missing resource is (the same code and message, but for the URI).
    const missingUri = `${gitRoot}no-such-ref/public.md`;
    const missing = await settle(client.readResource({ uri: missingUri }));
    expect(missing.ok).toBe(false);
    const reference = missing.ok ? undefined : (missing.error as Error);
    for (const uri of [
      `${gitRoot}log/main/secret.txt`,
      `${gitRoot}log/${secondCommit}/secret.txt`,
      `${gitRoot}log/HEAD/secret.txt?limit=5`,
    ]) {
      const denied = await settle(client.readResource({ uri }));
      expect(denied.ok, uri).toBe(false);
      if (denied.ok) continue;
      expect(errorCode(denied.error), uri).toBe(errorCode(reference));
      expect((denied.error as Error).message.replace(uri, '<uri>')).toBe(
        reference!.message.replace(missingUri, '<uri>'),
      );
    }
    const allowed = JSON.parse(
      textOf(await client.readResource({ uri: `${gitRoot}log/main/public.md` })),
    ) as { commits: unknown[] };
    expect(allowed.commits).toHaveLength(2);
    const asAdmin = JSON.parse(
      textOf(await adminClient.readResource({ uri: `${gitRoot}log/main/secret.txt` })),
    ) as { commits: unknown[] };
    expect(asAdmin.commits).toHaveLength(3);
  });

  it('leaves a commit that changed only denied files out of the history, with its message, and keeps the others', async () => {
    for (const uri of [
      `${gitRoot}log/main`,
      `${gitRoot}log/HEAD?limit=2`,
      `${gitRoot}log/${emptyCommit}`,
      `${gitRoot}commits/${emptyCommit}`,
    ]) {
      const text = textOf(await client.readResource({ uri }));
      expect(text, uri).not.toContain(hiddenCommit);
      expect(text, uri).not.toContain(`HIDDEN-${ID}`);
    }
    // Its id spelled as a ref names nothing, for a history or a file, like an id of no commit.
    // (The reference answer is awaited first: a read left pending beside it would reject unheard.)
    const noCommit = await settle(client.readResource({ uri: `${gitRoot}log/${'0'.repeat(40)}` }));
    const code = errorCode(noCommit.ok ? undefined : noCommit.error);
    for (const uri of [
      `${gitRoot}log/${hiddenCommit}`,
      `${gitRoot}${hiddenCommit}/public.md`,
      `${gitRoot}log/${hiddenCommit.slice(0, 10)}/public.md`,
    ]) {
      await expect(client.readResource({ uri }), uri).rejects.toMatchObject({ code });
    }
    expect(
      textOf(await adminClient.readResource({ uri: `${gitRoot}${hiddenCommit}/public.md` })),
    ).toBe('public v2\n');
    const history = JSON.parse(
      textOf(await client.readResource({ uri: `${gitRoot}log/main` })),
    ) as { commits: { sha: string; subject: string }[]; more: boolean };
    expect(history.commits.map((c) => c.subject)).toEqual([
      'nothing changed',
      'touch both',
      'initial',
    ]);
    expect(history.more).toBe(false);
    const firstTwo = JSON.parse(
      textOf(await client.readResource({ uri: `${gitRoot}log/main?limit=2` })),
    ) as { commits: { sha: string }[]; more: boolean };
    expect(firstTwo.commits.map((c) => c.sha)).toEqual([emptyCommit, secondCommit]);
    expect(firstTwo.more).toBe(true);
    expect(history.commits[0]).toMatchObject({ sha: emptyCommit, parents: [secondCommit] });
    const full = JSON.parse(
      textOf(await adminClient.readResource({ uri: `${gitRoot}log/main` })),
    ) as { commits: { sha: string; subject: string }[] };
    expect(full.commits.map((c) => c.sha).slice(0, 3)).toEqual([
      emptyCommit,
      hiddenCommit,
      secondCommit,
    ]);
    expect(full.commits[1]!.subject).toBe(HIDDEN_MESSAGE);
  });

  it('answers the view of a commit that changed only denied files exactly like a missing commit, and refuses a subscription to it', async () => {
    const missingUri = `${gitRoot}commits/${'0'.repeat(40)}`;
    const missing = await settle(client.readResource({ uri: missingUri }));
    expect(missing.ok).toBe(false);
    const reference = missing.ok ? undefined : (missing.error as Error);
    for (const uri of [
      `${gitRoot}commits/${hiddenCommit}`,
      `${gitRoot}commits/${hiddenCommit.slice(0, 12)}`,
    ]) {
      const denied = await settle(client.readResource({ uri }));
      expect(denied.ok, uri).toBe(false);
      if (denied.ok) continue;
      expect(errorCode(denied.error), uri).toBe(errorCode(reference));
      expect((denied.error as Error).message.replace(uri, '<uri>')).toBe(
        reference!.message.replace(missingUri, '<uri>'),
      );
    }
    const shown = JSON.parse(
      textOf(await client.readResource({ uri: `${gitRoot}commits/${emptyCommit}` })),
    ) as { message: string; files: unknown[] };
    // Its parent, the withheld commit, is named by its own parent instead.
    expect(shown).toMatchObject({ files: [], parents: [secondCommit] });
    expect(shown.message).toContain('nothing changed');
    const asAdmin = JSON.parse(
      textOf(await adminClient.readResource({ uri: `${gitRoot}commits/${hiddenCommit}` })),
    ) as { message: string };
    expect(asAdmin.message).toContain(HIDDEN_MESSAGE);
    // Nor is its id offered by completion.
    for (const [template, argument] of [
      [`${gitRoot}commits/{sha}`, 'sha'],
      [`${gitRoot}log/{ref}{?limit}`, 'ref'],
    ] as const) {
      const offered = async (who: Client): Promise<string[]> =>
        (
          await who.complete({
            ref: { type: 'ref/resource', uri: template },
            argument: { name: argument, value: hiddenCommit.slice(0, 8) },
          })
        ).completion.values;
      expect(await offered(client), template).toEqual([]);
      expect(await offered(adminClient), template).toEqual([hiddenCommit]);
    }
    const hidden = `${gitRoot}commits/${hiddenCommit}`;
    const visible = `${gitRoot}commits/${secondCommit}`;
    if (era === '2025') {
      expect((await settle(client.subscribeResource({ uri: hidden }))).ok).toBe(false);
      expect((await settle(client.subscribeResource({ uri: visible }))).ok).toBe(true);
      await client.unsubscribeResource({ uri: visible });
    } else {
      const subscription = await client.listen({ resourceSubscriptions: [hidden, visible] });
      try {
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual([visible]);
      } finally {
        await subscription.close();
      }
    }
  });

  it('refuses a subscription to the history of a denied git file, and keeps one to an allowed one', async () => {
    const denied = `${gitRoot}log/main/secret.txt`;
    const allowed = `${gitRoot}log/main/public.md`;
    if (era === '2025') {
      expect((await settle(client.subscribeResource({ uri: denied }))).ok).toBe(false);
      expect((await settle(client.subscribeResource({ uri: allowed }))).ok).toBe(true);
      await client.unsubscribeResource({ uri: allowed });
    } else {
      const subscription = await client.listen({ resourceSubscriptions: [denied, allowed] });
      try {
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual([allowed]);
      } finally {
        await subscription.close();
      }
    }
  });
});
