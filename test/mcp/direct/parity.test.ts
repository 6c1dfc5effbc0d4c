// The paths that answer a plain `resources/read` without the SDK's dispatch (src/mcp/direct/) must
// be indistinguishable from the SDK's own answer. One table, run over every provider fixture ×
// both protocol eras × each entry that serves the era — stdio (2025 and 2026), the 2025 HTTP
// session, the 2026 stateless HTTP request — reads the same URIs from two servers over the same
// data: one as shipped, one built with `directReads: false` (every request through the SDK). The
// JSON-RPC answers (and, over HTTP, status and content type) must be the same bytes, for text,
// blob and empty contents, ttl/cache hints and `_meta`, and for every error a read can end in:
// not found, a malformed URI, a URI no source serves, denied (answered as not found), too large,
// an unavailable source and a timeout. The request ids are the same on both sides, so the bytes
// are compared whole. PostgreSQL joins the table when RESERVOIR_TEST_PG is set.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../../src/core/access.js';
import type { Provider } from '../../../src/core/types.js';
import { filesProvider } from '../../../src/providers/files/index.js';
import { gitProvider } from '../../../src/providers/git/index.js';
import { s3Provider } from '../../../src/providers/s3/index.js';
import { sqlProvider } from '../../../src/providers/sql/index.js';
import { createReservoir, type Reservoir } from '../../../src/server/index.js';
import type { PolicyOptions } from '../../../src/server/policy.js';
import { LEGACY_VERSION } from '../../helpers/clients.js';
import {
  initializeParams,
  LegacyHttpSession,
  modernHttpRequest,
  modernMeta,
  rawHttp,
} from '../../helpers/wire.js';
import { makeRepo, repoName } from '../../providers/git-helpers.js';
import { ctx, fileUri, removeDir, tempDir } from '../../providers/helpers.js';
import { providerFor, respond, Upstream } from '../../providers/http-upstream.js';
import { PG_URL } from '../../providers/sql-helpers.js';
import { LocalS3 } from '../../providers/s3-server.js';
import { loadSqliteDriver } from '../../../src/core/sqlite-driver.js';

const Database = loadSqliteDriver();

type Era = '2025' | '2026';
type EntryName = 'stdio' | 'http session' | 'http stateless';

/** One way in: which era it serves, and how it opens a connection to a server. */
interface Entry {
  name: EntryName;
  era: Era;
  open(server: Served): Promise<Connection>;
}

interface Connection {
  /** The answer to `resources/read` of `uri` with request id `id`, as bytes on the wire (HTTP: status and type first). */
  read(id: number, uri: string): Promise<string>;
  close(): Promise<void>;
}

interface Served {
  reservoir: Reservoir;
  url: string;
  /** SDK server instances built so far (a 2026 request through the SDK builds one; a direct read none). */
  builds(): number;
}

/** A provider fixture: fresh providers over the same data for each server, and what to read. */
interface Fixture {
  name: string;
  providers(): Promise<Provider[]>;
  /** Reads every entry makes: [what, uri]. Listed URIs are added from the provider's first page. */
  reads: Array<[string, string]>;
  /** Access rules both servers apply (anonymous HTTP callers are subject to them; stdio's local user is not). */
  access?: AccessPolicy;
  /** Policy both servers apply (a deadline, for the timeout a hung source ends in). */
  policy?: PolicyOptions;
  cleanup(): Promise<void>;
}

const ENTRIES: readonly Entry[] = [
  { name: 'stdio', era: '2025', open: (server) => openStdio(server, '2025') },
  { name: 'stdio', era: '2026', open: (server) => openStdio(server, '2026') },
  { name: 'http session', era: '2025', open: openSession },
  { name: 'http stateless', era: '2026', open: openStateless },
];

/** Reads every fixture makes besides its own: a malformed URI and one no source serves. */
const COMMON_READS: Array<[string, string]> = [
  ['a malformed URI', 'not a uri'],
  ['a URI no source serves', 'mailto:nobody@example.com'],
];

const fixtures: Fixture[] = [];
const served: Array<{
  fixture: Fixture;
  direct: Served;
  sdk: Served;
  reads: Array<[string, string]>;
}> = [];

beforeAll(async () => {
  fixtures.push(
    filesFixture(),
    gitFixture(),
    sqliteFixture(),
    await httpFixture(),
    await s3Fixture(),
  );
  if (PG_URL !== undefined && PG_URL !== '') fixtures.push(await postgresFixture(PG_URL));
  for (const fixture of fixtures) {
    const [direct, sdk] = await Promise.all([serve(fixture, true), serve(fixture, false)]);
    const listed = await listedUris(await fixture.providers());
    const named = new Set(fixture.reads.map(([, uri]) => uri));
    const unnamed = listed
      .filter((uri) => !named.has(uri))
      .map((uri): [string, string] => ['a listed resource', uri]);
    served.push({ fixture, direct, sdk, reads: [...unnamed, ...fixture.reads, ...COMMON_READS] });
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(
    served.flatMap(({ direct, sdk }) => [direct.reservoir.close(), sdk.reservoir.close()]),
  );
  await Promise.allSettled(fixtures.map((fixture) => fixture.cleanup()));
});

describe.each(ENTRIES.map((entry) => [`${entry.name} at ${entry.era}`, entry] as const))(
  'direct reads over %s',
  (_label, entry) => {
    // Bounded by events, not by this timeout: it only stops a hung run (the hung upstream costs 2 s per server).
    it(
      'answer every read of every provider fixture with the same bytes as the SDK path',
      { timeout: 180_000 },
      async () => {
        expect(served.length).toBeGreaterThanOrEqual(5);
        for (const { fixture, direct, sdk, reads } of served) {
          const [fast, reference] = await Promise.all([entry.open(direct), entry.open(sdk)]);
          const built = { direct: direct.builds(), sdk: sdk.builds() };
          try {
            let id = 100;
            for (const [what, uri] of reads) {
              id += 1;
              const [mine, theirs] = await Promise.all([
                fast.read(id, uri),
                reference.read(id, uri),
              ]);
              expect(mine, `${fixture.name}: ${what} (${uri})`).toBe(theirs);
            }
            // The comparison is between two paths: over stateless HTTP, no read of the first server
            // reached the SDK, and every read of the second did. (The stdio and session entries build
            // one instance per connection either way; test/mcp/direct/stdio.test.ts and
            // test/e2e/http-session-read.test.ts pin that their plain reads skip the SDK.)
            if (entry.name === 'http stateless') {
              expect(direct.builds() - built.direct, fixture.name).toBe(0);
              expect(sdk.builds() - built.sdk, fixture.name).toBe(reads.length);
            }
          } finally {
            await Promise.all([fast.close(), reference.close()]);
          }
        }
      },
    );
  },
);

describe('the table covers what it claims', () => {
  // Not found (and denied, answered alike) is -32602 on 2026-07-28, with no code of ours in its data.
  it(
    'reads text, blob and empty contents, a ttl hint, and each error kind somewhere',
    { timeout: 180_000 },
    async () => {
      const seen = new Set<string>();
      for (const { direct, reads } of served) {
        const connection = await openStateless(direct);
        let id = 1;
        for (const [, uri] of reads) {
          const answer = JSON.parse(
            (await connection.read((id += 1), uri)).split('\n').slice(2).join('\n'),
          ) as {
            result?: {
              contents: Array<{ text?: string; blob?: string }>;
              ttlMs?: number;
              _meta?: unknown;
            };
            error?: { code: number; data?: { code?: string } };
          };
          if (answer.error !== undefined)
            seen.add(`error ${answer.error.data?.code ?? answer.error.code}`);
          for (const content of answer.result?.contents ?? []) {
            if (content.blob !== undefined) seen.add('blob');
            else if (content.text === '') seen.add('empty');
            else if (content.text !== undefined) seen.add('text');
          }
          if ((answer.result?.ttlMs ?? 0) > 0) seen.add('ttl');
          if (answer.result?._meta !== undefined) seen.add('_meta');
        }
        await connection.close();
      }
      expect([...seen].sort()).toEqual(
        expect.arrayContaining([
          '_meta',
          'blob',
          'empty',
          'error -32602',
          'error invalid_argument',
          'error invalid_uri',
          'error timeout',
          'error too_large',
          'error unavailable',
          'text',
          'ttl',
        ]),
      );
    },
  );
});

// ---- servers and entries

async function serve(fixture: Fixture, directReads: boolean): Promise<Served> {
  const reservoir = createReservoir({
    providers: await fixture.providers(),
    directReads,
    ...(fixture.access === undefined ? {} : { access: fixture.access }),
    ...(fixture.policy === undefined ? {} : { policy: fixture.policy }),
  });
  // Counts what the SDK path costs: every 2026-07-28 request it serves builds an instance.
  let builds = 0;
  const factory = reservoir.factory;
  (reservoir as { factory: typeof factory }).factory = (ctx) => {
    builds += 1;
    return factory(ctx);
  };
  const { url } = await reservoir.listen({ port: 0 });
  return { reservoir, url, builds: () => builds };
}

async function listedUris(providers: Provider[]): Promise<string[]> {
  const uris: string[] = [];
  for (const provider of providers) {
    const page = await provider.list(undefined, 4, ctx());
    uris.push(...page.items.map((item) => item.uri));
    await provider.close?.();
  }
  return uris;
}

/** A stdio connection on in-memory streams; 2025: after `initialize`; 2026: every request carries its envelope. */
async function openStdio(server: Served, era: Era): Promise<Connection> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const handle = server.reservoir.serveStdio({ stdin, stdout });
  let buffered = '';
  const lines: string[] = [];
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      lines.push(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  });
  const answerTo = async (id: number): Promise<string> => {
    for (;;) {
      const at = lines.findIndex((line) => (JSON.parse(line) as { id?: unknown }).id === id);
      if (at !== -1) return lines.splice(at, 1)[0]!;
      await once(stdout, 'data');
    }
  };
  const send = (message: unknown): boolean => stdin.write(`${JSON.stringify(message)}\n`);
  if (era === '2025') {
    const answered = answerTo(1);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { ...initializeParams(), protocolVersion: LEGACY_VERSION },
    });
    await answered;
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
  return {
    read: (id, uri) => {
      const answered = answerTo(id);
      send({
        jsonrpc: '2.0',
        id,
        method: 'resources/read',
        params: era === '2025' ? { uri } : { uri, _meta: modernMeta() },
      });
      return answered;
    },
    close: () => handle.close(),
  };
}

/** The HTTP answer as compared: status, content type, then the body's bytes. */
function wire(response: {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}): string {
  return `${response.status}\n${String(response.headers['content-type'])}\n${response.body}`;
}

async function openSession(server: Served): Promise<Connection> {
  const session = await LegacyHttpSession.open(server.url);
  return {
    read: async (id, uri) =>
      wire(
        await rawHttp(server.url, {
          headers: session.headers(),
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri } }),
        }),
      ),
    close: () => session.close(),
  };
}

function openStateless(server: Served): Promise<Connection> {
  return Promise.resolve({
    read: async (id, uri) =>
      wire(await modernHttpRequest(server.url, id, 'resources/read', { uri })),
    close: () => Promise.resolve(),
  });
}

// ---- provider fixtures

function filesFixture(): Fixture {
  const root = tempDir('reservoir-parity-files-');
  writeFileSync(join(root, 'note.txt'), 'hello\n');
  writeFileSync(join(root, 'ünïcode name.md'), '# wide ✓\n');
  writeFileSync(join(root, 'bytes.bin'), Buffer.from([0, 1, 2, 0xff, 0xfe]));
  writeFileSync(join(root, 'empty.txt'), '');
  writeFileSync(join(root, 'big.txt'), 'x'.repeat(4096));
  writeFileSync(join(root, 'secret.txt'), 'not for anonymous callers\n');
  return {
    name: 'files',
    providers: async () => [await filesProvider({ root, maxReadBytes: 1024 })],
    reads: [
      ['text', fileUri(join(root, 'note.txt'))],
      ['a non-ASCII name', fileUri(join(root, 'ünïcode name.md'))],
      ['a blob', fileUri(join(root, 'bytes.bin'))],
      ['empty contents', fileUri(join(root, 'empty.txt'))],
      ['a file over the read cap', fileUri(join(root, 'big.txt'))],
      ['a missing file', fileUri(join(root, 'missing.txt'))],
      ['a path outside the root', 'file:///etc/passwd'],
      ['a denied file', fileUri(join(root, 'secret.txt'))],
      ['a directory', fileUri(root)],
    ],
    access: new AccessPolicy({
      default: 'allow',
      rules: [{ principals: ['anonymous'], deny: [`${fileUri(root)}/secret*`] }],
    }),
    cleanup: () => Promise.resolve(removeDir(root)),
  };
}

function gitFixture(): Fixture {
  const dir = makeRepo({
    'README.md': '# read me\n',
    'data/bytes.bin': Buffer.from([0, 0xff, 1]),
    'empty.txt': '',
  });
  const base = `git://${repoName(dir)}/main/`;
  return {
    name: 'git',
    providers: () => Promise.resolve([gitProvider({ path: dir })]),
    reads: [
      ['text', `${base}README.md`],
      ['a blob', `${base}data/bytes.bin`],
      ['empty contents', `${base}empty.txt`],
      ['a missing path', `${base}no-such-file.txt`],
      ['a missing ref', `git://${repoName(dir)}/no-such-ref/README.md`],
    ],
    cleanup: () => Promise.resolve(removeDir(dir)),
  };
}

function sqliteFixture(): Fixture {
  const dir = tempDir('reservoir-parity-sqlite-');
  const path = join(dir, 'app.db');
  const db = new Database(path);
  db.exec(
    'CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL); CREATE TABLE empty (k TEXT);',
  );
  db.prepare('INSERT INTO users VALUES (?, ?)').run(1, 'ada');
  db.prepare('INSERT INTO users VALUES (?, ?)').run(2, 'grace');
  db.close();
  return {
    name: 'sqlite',
    providers: () => Promise.resolve([sqlProvider({ path, name: 'parity' })]),
    reads: [
      ['rows', 'db://parity/tables/users/rows'],
      ['rows as CSV', 'db://parity/tables/users/rows?format=csv'],
      ['an empty table', 'db://parity/tables/empty/rows'],
      ['the schema', 'db://parity/schema'],
      ['a missing table', 'db://parity/tables/nope/rows'],
      ['a bad parameter', 'db://parity/tables/users/rows?limit=zero'],
    ],
    cleanup: () => Promise.resolve(removeDir(dir)),
  };
}

async function httpFixture(): Promise<Fixture> {
  const upstream = await Upstream.start();
  upstream.route(
    '/status',
    respond('{"ok":true}', 'application/json', { 'cache-control': 'no-store' }),
  );
  upstream.route(
    '/logo',
    respond(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]), 'image/png', {
      'cache-control': 'no-store',
    }),
  );
  upstream.route('/empty', respond('', 'text/plain', { 'cache-control': 'no-store' }));
  upstream.route('/down', respond('busy', 'text/plain', {}, 503));
  upstream.route('/hang', () => undefined);
  const endpoints = [
    { name: 'status', uri: 'status', upstream: 'status' },
    { name: 'logo', uri: 'logo.png', upstream: 'logo' },
    { name: 'empty', uri: 'empty', upstream: 'empty' },
    { name: 'down', uri: 'down', upstream: 'down' },
    { name: 'hang', uri: 'hang', upstream: 'hang' },
  ];
  return {
    name: 'http upstream',
    providers: () =>
      Promise.resolve([providerFor(upstream, { endpoints }), ttlFixedProvider(upstream)]),
    // The hung upstream ends in the operation's deadline (the provider's own is 30 s); every other
    // read of this fixture is answered long before it.
    policy: { deadlineMs: 2_000 },
    reads: [
      ['JSON', 'http://test/status'],
      ['a blob', 'http://test/logo.png'],
      ['empty contents', 'http://test/empty'],
      ['an upstream answering 503', 'http://test/down'],
      ['an upstream that never answers', 'http://test/hang'],
      ['an endpoint not configured', 'http://test/nope'],
      ['a ttl hint', 'http://cached/status'],
    ],
    cleanup: () => upstream.close(),
  };
}

/**
 * A second HTTP source (`http://cached/`) whose reads carry a ttl hint. The provider's own hint
 * counts down from the moment its cache was filled (two servers would differ by the milliseconds
 * between their reads), so this source wraps it to give one fixed hint: a wrapper provider is
 * itself a Provider.
 */
function ttlFixedProvider(upstream: Upstream): Provider {
  const inner = providerFor(upstream, {
    name: 'cached',
    endpoints: [{ name: 'status', uri: 'status', upstream: 'status' }],
  });
  return {
    name: inner.name,
    root: inner.root,
    list: (after, limit, call) => inner.list(after, limit, call),
    read: async (uri, call) => ({ ...(await inner.read(uri, call)), ttlMs: 60_000 }),
    close: () => inner.close(),
  };
}

async function s3Fixture(): Promise<Fixture> {
  const s3 = await LocalS3.start();
  await s3.bucket('parity');
  await s3.put('parity', 'docs/readme.md', '# s3 read me\n');
  await s3.put('parity', 'bytes.bin', Buffer.from([0, 1, 0xff]));
  return {
    name: 's3',
    providers: () => Promise.resolve([s3Provider(s3.source('parity'))]),
    reads: [
      ['text', 's3://parity/docs/readme.md'],
      ['a blob', 's3://parity/bytes.bin'],
      ['a missing key', 's3://parity/no-such-key'],
      ['another bucket', 's3://elsewhere/readme.md'],
    ],
    cleanup: () => s3.close(),
  };
}

async function postgresFixture(url: string): Promise<Fixture> {
  const schema = 'bypass_parity';
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.users (id int PRIMARY KEY, name text NOT NULL); CREATE TABLE ${schema}.empty (k text); INSERT INTO ${schema}.users VALUES (1, 'ada'), (2, 'grace')`,
  );
  return {
    name: 'postgresql',
    providers: () =>
      Promise.resolve([sqlProvider({ url, schema, name: 'pgparity', allowPrivilegedRole: true })]),
    reads: [
      ['rows', 'db://pgparity/tables/users/rows'],
      ['an empty table', 'db://pgparity/tables/empty/rows'],
      ['the schema', 'db://pgparity/schema'],
      ['a missing table', 'db://pgparity/tables/nope/rows'],
    ],
    cleanup: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}
