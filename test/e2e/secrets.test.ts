// Issue 25, item 6: a files source skips files that hold secrets by default — environment files,
// private keys and key stores, registry and login credentials, cloud and container credentials, at
// any depth and in any letter case — from lists, reads (answered like missing files), directory
// reads, completion, search and subscriptions, while their public halves and templates are served.
// `serveSecrets` serves them; `secretPatterns` adds names and, with `!`, serves a default one.
// Through the real SDK client over stdio and HTTP, in both eras; the CLI switch through the built CLI.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/http/app.js';
import { DEFAULT_SECRET_PATTERNS, filesProvider, type FilesOptions } from '../../src/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { connectHttp, ERAS, listAllPages, TARGETS, type Era } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { settle } from '../security/harness.js';
import { connectInProcess, Recorder, waitFor } from '../subscriptions/harness.js';
import { textOf } from '../tools/helpers.js';
import { serveCli } from './serve-cli.js';

const WORD = 'axolotl';

/** Files that hold secrets: each is skipped by default. */
const SECRETS = [
  '.env',
  '.env.local',
  '.Env.Production',
  'app/.env',
  'app/.env.development.local',
  'keys/server.pem',
  'keys/SERVER.PEM',
  'keys/tls.key',
  'keys/store.p12',
  'keys/app.pfx',
  'keys/app.jks',
  'keys/release.keystore',
  '.ssh/id_rsa',
  '.ssh/id_dsa',
  '.ssh/id_ecdsa_sk',
  '.ssh/id_ed25519',
  'deploy/id_rsa.old',
  '.npmrc',
  'web/.npmrc',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.htpasswd',
  '.aws/credentials',
  'home/.aws/credentials',
  '.azure/msal_token_cache.json',
  '.config/gcloud/application_default_credentials.json',
  '.config/gcloud/credentials.db',
  '.config/gcloud/legacy_credentials/me@example.com/adc.json',
  '.docker/config.json',
  'home/.kube/config',
];

/** Near-misses that are served: public halves, templates, other files in the same directories. */
const SERVED = [
  'notes.md',
  '.env.example',
  '.env.sample',
  '.env.template',
  'app/.env.dist',
  '.ssh/id_ed25519.pub',
  '.ssh/known_hosts',
  '.aws/config',
  '.config/gcloud/configurations/config_default',
  '.docker/daemon.json',
  'home/.kube/cache.md',
  'environment.md',
  'keys/README.md',
];

let dir: string;
let root: string;

beforeAll(() => {
  dir = makeTempDir('reservoir-secrets-');
  root = join(dir, 'tree');
  mkdirSync(root);
  writeTree(
    root,
    Object.fromEntries([...SECRETS, ...SERVED].map((rel) => [rel, `${WORD} in ${rel}\n`])),
  );
  // A symbolic link is judged on where it leads.
  symlinkSync('.env', join(root, 'env-link.txt'));
});

afterAll(() => removeTree(dir));

type Hits = { hits: { uri: string }[] };

function serve(options: Omit<FilesOptions, 'root'>, state: string): Reservoir {
  const reservoir = createReservoir({
    providers: [filesProvider({ root, ...options })],
    search: { stateDir: join(dir, state) },
  });
  const search = reservoir.search!;
  for (const tool of builtinTools(reservoir.registry, { search: { open: () => search.open() } }))
    reservoir.tools.add(tool);
  return reservoir;
}

const listed = async (client: Client): Promise<string[]> =>
  (await listAllPages(client)).flatMap((page) => page.resources.map((r) => r.uri));

async function searched(client: Client, query: string): Promise<string[]> {
  const result = (await client.callTool({
    name: 'search_resources',
    arguments: { query, limit: 100 },
  })) as CallToolResult;
  expect(result.isError ?? false, textOf(result)).toBe(false);
  return (result.structuredContent as Hits).hits.map((h) => h.uri);
}

async function childNames(client: Client, rel: string): Promise<string[]> {
  const result = await client.readResource({ uri: dirUri(root, rel) });
  return (JSON.parse((result.contents[0] as { text: string }).text) as { name: string }[]).map(
    (c) => c.name,
  );
}

async function completed(client: Client, value: string): Promise<string[]> {
  const answer = await client.complete({
    ref: { type: 'ref/resource', uri: `${dirUri(root)}{+path}` },
    argument: { name: 'path', value },
  });
  return answer.completion.values;
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

describe.each(
  ERAS.flatMap((era) => [
    { era, transport: 'stdio' as const },
    { era, transport: 'http' as const },
  ]),
)(
  'secret files skipped by default ($transport, $era era)',
  ({ era, transport }: { era: Era; transport: 'stdio' | 'http' }) => {
    let reservoir: Reservoir;
    let endpoint: HttpEndpoint | undefined;
    let client: Client;

    beforeAll(async () => {
      reservoir = serve({}, `state-${era}-${transport}`);
      await (
        await reservoir.search!.open()
      ).ready;
      if (transport === 'http') endpoint = await reservoir.listen({ host: '127.0.0.1', port: 0 });
      client =
        transport === 'stdio'
          ? (await connectInProcess(reservoir, era)).client
          : (await connectHttp(era, endpoint!.url)).client;
    });

    afterAll(async () => {
      await client?.close();
      await reservoir?.close();
    });

    it('lists the served files and none of the secrets', async () => {
      const uris = await listed(client);
      expect(uris.sort()).toEqual(SERVED.map((rel) => fileUri(root, rel)).sort());
    });

    it('answers a read of each secret, and of a link to one, exactly like a missing file', async () => {
      const reference = await failure(client, fileUri(root, 'missing.txt'));
      for (const rel of [...SECRETS, 'env-link.txt'])
        expect(await failure(client, fileUri(root, rel)), rel).toEqual(reference);
      for (const rel of ['.azure', '.config/gcloud/legacy_credentials'])
        expect((await settle(client.readResource({ uri: dirUri(root, rel) }))).ok, rel).toBe(false);
      expect(
        (await client.readResource({ uri: fileUri(root, '.env.example') })).contents[0],
      ).toMatchObject({ text: `${WORD} in .env.example\n` });
    });

    it('names no secret in a directory read', async () => {
      expect((await childNames(client, '')).sort()).toEqual(
        [
          '.aws',
          '.config',
          '.docker',
          '.ssh',
          'app',
          'deploy',
          'home',
          'keys',
          'web',
          '.env.example',
          '.env.sample',
          '.env.template',
          'environment.md',
          'notes.md',
        ].sort(),
      );
      expect(await childNames(client, 'app')).toEqual(['.env.dist']);
      expect(await childNames(client, 'deploy')).toEqual([]);
      expect(await childNames(client, 'keys')).toEqual(['README.md']);
      expect((await childNames(client, '.ssh')).sort()).toEqual(['id_ed25519.pub', 'known_hosts']);
      expect(await childNames(client, '.aws')).toEqual(['config']);
      expect(await childNames(client, 'home/.kube')).toEqual(['cache.md']);
    });

    it('offers no secret in completion', async () => {
      const dots = await completed(client, '.');
      expect(dots.sort()).toEqual(
        [
          '.aws/',
          '.config/',
          '.docker/',
          '.env.example',
          '.env.sample',
          '.env.template',
          '.ssh/',
        ].sort(),
      );
      expect(await completed(client, '.ssh/id')).toEqual(['.ssh/id_ed25519.pub']);
      expect(await completed(client, 'keys/')).toEqual(['keys/README.md']);
      expect(await completed(client, '.azure/')).toEqual([]);
      expect(await completed(client, '.n')).toEqual([]);
    });

    it('finds served files by a word every file holds, and no secret', async () => {
      const hits = await searched(client, WORD);
      expect(hits).toEqual(
        expect.arrayContaining(
          ['notes.md', '.env.example', '.aws/config', 'keys/README.md'].map((rel) =>
            fileUri(root, rel),
          ),
        ),
      );
      expect(hits.filter((uri) => !SERVED.some((rel) => fileUri(root, rel) === uri))).toEqual([]);
    });

    it('refuses a subscription to a secret, and sends no update when one changes', async () => {
      const secret = fileUri(root, '.env');
      const notes = fileUri(root, 'notes.md');
      const recorder = new Recorder(client);
      let stop: () => Promise<void>;
      if (era === '2025') {
        expect((await settle(client.subscribeResource({ uri: secret }))).ok).toBe(false);
        await client.subscribeResource({ uri: notes });
        stop = () => client.unsubscribeResource({ uri: notes }).then(() => undefined);
      } else {
        const subscription = await client.listen({ resourceSubscriptions: [secret, notes] });
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual([notes]);
        stop = () => subscription.close();
      }
      try {
        writeFileSync(join(root, '.env'), `${WORD} changed\n`);
        writeFileSync(join(root, 'notes.md'), `${WORD} in notes.md\n`);
        await waitFor(() => recorder.updates(notes) > 0, 'an update for notes.md', 10_000);
        expect(recorder.updatedUris().filter((uri) => uri !== notes)).toEqual([]);
      } finally {
        await stop();
      }
    });
  },
);

describe('changing the secret list', () => {
  it('serves every secret with serveSecrets', async () => {
    const reservoir = serve({ serveSecrets: true }, 'state-served');
    const { client } = await connectInProcess(reservoir, '2026');
    try {
      const uris = await listed(client);
      expect(uris).toEqual(
        expect.arrayContaining([...SECRETS, ...SERVED].map((rel) => fileUri(root, rel))),
      );
      expect(
        (await client.readResource({ uri: fileUri(root, '.aws/credentials') })).contents[0],
      ).toMatchObject({ text: `${WORD} in .aws/credentials\n` });
      expect(await completed(client, '.n')).toEqual(['.netrc', '.npmrc']);
      expect(await searched(client, WORD)).toEqual(
        expect.arrayContaining(
          ['.env', '.aws/credentials', '.ssh/id_rsa'].map((rel) => fileUri(root, rel)),
        ),
      );
    } finally {
      await client.close();
      await reservoir.close();
    }
  });

  it('finds no secret in an index built while they were served, once they are skipped again', async () => {
    const reservoir = serve({}, 'state-served');
    const { client } = await connectInProcess(reservoir, '2026');
    try {
      const hits = await searched(client, WORD);
      expect(hits).toContain(fileUri(root, 'notes.md'));
      expect(hits.filter((uri) => !SERVED.some((rel) => fileUri(root, rel) === uri))).toEqual([]);
    } finally {
      await client.close();
      await reservoir.close();
    }
  });

  it('skips more with secretPatterns, and serves a default name after a !pattern', async () => {
    const reservoir = serve({ secretPatterns: ['environment.md', '!*.pem'] }, 'state-custom');
    const { client } = await connectInProcess(reservoir, '2026');
    try {
      const uris = await listed(client);
      expect(uris).toEqual(
        expect.arrayContaining([
          fileUri(root, 'keys/server.pem'),
          fileUri(root, 'keys/SERVER.PEM'),
        ]),
      );
      expect(uris).not.toContain(fileUri(root, 'environment.md'));
      expect(uris).not.toContain(fileUri(root, 'keys/tls.key'));
      expect((await settle(client.readResource({ uri: fileUri(root, 'environment.md') }))).ok).toBe(
        false,
      );
      // Served, and as the text it holds (content sniffing: a PEM file is text whatever its name).
      expect(
        (await client.readResource({ uri: fileUri(root, 'keys/server.pem') })).contents[0],
      ).toMatchObject({ text: `${WORD} in keys/server.pem\n` });
    } finally {
      await client.close();
      await reservoir.close();
    }
  });

  it('publishes the default list for library users, the documented templates and public keys negated', () => {
    expect(DEFAULT_SECRET_PATTERNS).toEqual(
      expect.arrayContaining([
        '.env',
        '.env.*',
        '!.env.example',
        '*.pem',
        'id_rsa*',
        '!id_*.pub',
        '.npmrc',
        '.netrc',
        '**/.aws/credentials',
      ]),
    );
  });

  it('cannot be undone by a .gitignore', async () => {
    const tree = join(dir, 'negated');
    writeTree(tree, {
      '.gitignore': '!.env\n!*.pem\n',
      '.env': 'x\n',
      'a.pem': 'x\n',
      'ok.md': 'x\n',
    });
    const provider = filesProvider({ root: tree });
    const reservoir = createReservoir({ providers: [provider] });
    const { client } = await connectInProcess(reservoir, '2025');
    try {
      expect((await listed(client)).sort()).toEqual(
        [fileUri(tree, '.gitignore'), fileUri(tree, 'ok.md')].sort(),
      );
    } finally {
      await client.close();
      await reservoir.close();
    }
  });
});

describe.each(TARGETS.filter((t) => t.transport === 'stdio'))(
  'reservoir serve and secrets ($transport, $era era)',
  (target) => {
    let tree: string;

    beforeAll(async () => {
      await ensureBuilt();
      tree = join(dir, 'cli');
      writeTree(tree, { '.env': 'TOKEN=1\n', 'api.token': 't\n', 'ok.md': 'ok\n' });
    });

    it('skips secrets by default, serves them with --serve-secrets, and takes secretPatterns from the config', async () => {
      const uris = async (args: string[]): Promise<string[]> => {
        const served = await serveCli(target, { args, cwd: tree });
        try {
          return (await listed(served.client)).sort();
        } finally {
          await served.close();
        }
      };
      expect(await uris(['--no-config', '.'])).toEqual([
        fileUri(tree, 'api.token'),
        fileUri(tree, 'ok.md'),
      ]);
      expect(await uris(['--no-config', '--serve-secrets', '.'])).toEqual([
        fileUri(tree, '.env'),
        fileUri(tree, 'api.token'),
        fileUri(tree, 'ok.md'),
      ]);
      const config = join(dir, `cli-${target.era}.yaml`);
      writeFileSync(
        config,
        `sources:\n  - { type: files, root: ${JSON.stringify(tree)}, secretPatterns: ["*.token"] }\n`,
      );
      expect(await uris(['--config', config])).toEqual([fileUri(tree, 'ok.md')]);
    });
  },
);
