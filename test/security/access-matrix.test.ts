// Issue 6, item 7: the access matrix, end to end. A real HTTP socket, the real SDK client in both
// eras, and a bearer token scoped to docs/ that tries every route to secrets/ — lists (every page),
// reads in every spelling, template reads, completion, a prompt embedding a secret, each built-in
// tool, subscriptions, someone else's cursor and someone else's session — and gets nothing. Every
// response body the clients received is scanned: the secret's content never appears, and its name
// never appears in an answer to a request that did not name it.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import type { Prompt } from '../../src/core/prompts.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { ERAS, listAllPages, listPage, type Era } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { rawHttp } from '../helpers/wire.js';
import {
  AuthedLegacySession,
  closeClient,
  connectWithToken,
  errorCode,
  makeToken,
  settle,
  WireLog,
} from './harness.js';

const ID = randomBytes(6).toString('hex');
const SECRET = `S3CRET-CONTENT-${ID}-do-not-leak`;
const SECRET_NAME = `vault-${ID}.txt`;
const DOCS = ['docs/guide.md', 'docs/a.md', 'docs/b.md', 'docs/sub/c.md'];

const docs = makeToken('docs-bot', ['docs']);
const admin = makeToken('admin', ['admin']);
const nobody = makeToken('nobody', []);
const most = makeToken('most-bot', ['most']);
const TOKENS = [docs, admin, nobody, most];

let root: string;
let base: string;
let secretUri: string;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;
/** What every restricted principal's client received; scanned for the secret. */
const log = new WireLog();
/** The admin's exchanges (allowed to see secrets/): kept apart, not scanned. */
const adminLog = new WireLog();

function setup(): {
  rules: ConstructorParameters<typeof AccessPolicy>[0]['rules'];
  prompts: Prompt[];
} {
  return {
    rules: [
      { scopes: ['docs'], allow: [`${base}docs/**`, 'prompt:*', 'tool:*'] },
      { scopes: ['admin'], allow: ['file:///**', 'prompt:*', 'tool:*'] },
      { scopes: ['most'], allow: [`${base}**`, 'prompt:*', 'tool:*'], deny: [`${base}secrets/**`] },
    ],
    prompts: [
      {
        name: 'leak',
        description: 'Embeds a resource from secrets/',
        messages: () => [{ role: 'user', content: { type: 'resource_ref', uri: secretUri } }],
      },
      {
        name: 'leak-encoded',
        description: 'Embeds a resource from secrets/, spelled sideways',
        messages: () => [
          {
            role: 'user',
            content: { type: 'resource_ref', uri: `${base}docs/%2e%2e/%73ecrets/${SECRET_NAME}` },
          },
        ],
      },
      {
        name: 'guide',
        description: 'Embeds the guide',
        messages: () => [
          { role: 'user', content: { type: 'resource_ref', uri: `${base}docs/guide.md` } },
        ],
      },
    ],
  };
}

beforeAll(async () => {
  root = makeTempDir('reservoir-access-');
  writeTree(root, {
    ...Object.fromEntries(DOCS.map((rel) => [rel, `Public text of ${rel}.\n`])),
    [`secrets/${SECRET_NAME}`]: `${SECRET}\n`,
    'secrets/inner/more.txt': `${SECRET} again\n`,
  });
  base = dirUri(root);
  secretUri = `${base}secrets/${SECRET_NAME}`;
  const { rules, prompts } = setup();
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    pageSize: 2,
    prompts,
    access: new AccessPolicy({ rules }),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: TOKENS.map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
    }),
  });
});

afterAll(async () => {
  await reservoir?.close();
  removeTree(root);
});

/** Every spelling of a way into secrets/ through resources/read. */
function secretSpellings(): string[] {
  const local = base.replace('file:///', 'file://localhost/');
  return [
    secretUri,
    `${base}secrets/`,
    `${base}secrets`,
    `${base}secrets/inner/more.txt`,
    base,
    `${base}%73ecrets/${SECRET_NAME}`,
    `${base}%73%65%63%72%65%74%73/${SECRET_NAME}`,
    `${base}secret%73/${SECRET_NAME}`,
    `${base}docs/../secrets/${SECRET_NAME}`,
    `${base}docs/%2e%2e/secrets/${SECRET_NAME}`,
    `${base}docs/%2E%2E/%73ecrets/${SECRET_NAME}`,
    `${base}docs/.%2e/secrets/${SECRET_NAME}`,
    `${base}docs/./../secrets/${SECRET_NAME}`,
    `${base}docs/sub/../../secrets/${SECRET_NAME}`,
    `${base}docs/%252e%252e/secrets/${SECRET_NAME}`,
    `${base}%2573ecrets/${SECRET_NAME}`,
    `${base}docs/..%2fsecrets/${SECRET_NAME}`,
    `${base}docs/..%2Fsecrets/${SECRET_NAME}`,
    `${base}docs/..%5Csecrets/${SECRET_NAME}`,
    `${base}docs\\..\\secrets\\${SECRET_NAME}`,
    `${base}/secrets/${SECRET_NAME}`,
    `${base}secrets//${SECRET_NAME}`,
    `${base}docs//../secrets/${SECRET_NAME}`,
    `${local}secrets/${SECRET_NAME}`,
    `FILE://${secretUri.slice('file://'.length)}`,
    `${secretUri}#fragment`,
    `${secretUri}?`,
    // template reads: {+path}{?lines}
    `${secretUri}?lines=1-1`,
    `${secretUri}?lines=1-`,
    `${secretUri}?lines=1`,
    `${base}docs/../secrets/${SECRET_NAME}?lines=1-5`,
    `${base}docs/%2e%2e/%73ecrets/${SECRET_NAME}?lines=1`,
    `${base}/secrets/${SECRET_NAME}?lines=1-1`,
  ];
}

/** What a request "names": the secret's file name or the directory, in any spelling we send. */
function namesSecret(text: string): boolean {
  return text.includes(ID) || /ecret|%73|%2573/i.test(text);
}

/** How many exchanges earlier scans covered: each scan judges the exchanges since the last. */
let scanned = 0;

/** Every exchange since the last scan: no secret content ever; no secret name unless the request named it. */
async function expectNothingLeaked(): Promise<void> {
  await log.settle();
  const fresh = log.exchanges.slice(scanned);
  scanned = log.exchanges.length;
  expect(fresh.length).toBeGreaterThan(5);
  const violations: string[] = [];
  for (const exchange of fresh) {
    const what = `${exchange.request.slice(0, 160)} → ${exchange.response.slice(0, 400)}`;
    if (exchange.response.includes(SECRET)) violations.push(`content: ${what}`);
    else if (
      !namesSecret(exchange.request) &&
      (exchange.response.includes(SECRET_NAME) || /secrets/i.test(exchange.response))
    )
      violations.push(`name: ${what}`);
  }
  expect(violations).toEqual([]);
}

function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as { type: string; text?: string }[])
    .map((c) => c.text ?? '')
    .join('\n');
}

describe.each(ERAS)('a token scoped to docs/ (%s era)', (era: Era) => {
  let client: Client;
  let adminClient: Client;

  beforeAll(async () => {
    client = await connectWithToken(era, endpoint.url, docs.token, log);
    adminClient = await connectWithToken(era, endpoint.url, admin.token, adminLog);
  });
  afterAll(async () => {
    await closeClient(client);
    await closeClient(adminClient);
  });

  it('lists, over every page, only resources under docs/', async () => {
    const pages = await listAllPages(client);
    expect(pages.length).toBeGreaterThan(1);
    const uris = pages.flatMap((p) => p.resources.map((r) => r.uri));
    expect(uris.sort()).toEqual(DOCS.map((rel) => `${base}${rel}`).sort());
    // The admin sees secrets/ too (the rules, not the tree, hide it).
    const all = (await listAllPages(adminClient)).flatMap((p) => p.resources.map((r) => r.uri));
    expect(all).toContain(secretUri);
  });

  it('answers reads of secrets/, in every spelling, exactly like a missing resource', async () => {
    const missing = `${base}docs/no-such-file.md`;
    const reference = await settle(client.readResource({ uri: missing }));
    expect(reference.ok).toBe(false);
    const referenceCode = reference.ok ? undefined : errorCode(reference.error);
    const referenceMessage = reference.ok
      ? ''
      : String((reference.error as Error).message).replace(missing, '<uri>');
    for (const uri of secretSpellings()) {
      const outcome = await settle(client.readResource({ uri }));
      expect(outcome.ok, uri).toBe(false);
      if (outcome.ok) continue;
      const code = errorCode(outcome.error);
      // A spelling the URI parser refuses outright is an invalid URI for anyone; all others are "not found".
      if (code === referenceCode)
        expect(String((outcome.error as Error).message).replace(uri, '<uri>'), uri).toBe(
          referenceMessage,
        );
      else expect([-32602], uri).toContain(code);
    }
    // The docs still read, whole and through the line template.
    expect((await client.readResource({ uri: `${base}docs/guide.md` })).contents[0]).toMatchObject({
      text: 'Public text of docs/guide.md.\n',
    });
    expect(
      (await client.readResource({ uri: `${base}docs/guide.md?lines=1-1` })).contents[0],
    ).toMatchObject({ text: 'Public text of docs/guide.md.\n' });
    const listing = (await client.readResource({ uri: `${base}docs/` })).contents[0] as {
      text: string;
    };
    expect(listing.text).toContain('guide.md');
    // The admin reads the secret: the tree really has it.
    expect((await adminClient.readResource({ uri: secretUri })).contents[0]).toMatchObject({
      text: `${SECRET}\n`,
    });
  });

  it('completes template paths to docs/ only, at the root and inside secrets/', async () => {
    for (const uriTemplate of [`${base}{+path}`, `${base}{+path}{?lines}`]) {
      const top = await client.complete({
        ref: { type: 'ref/resource', uri: uriTemplate },
        argument: { name: 'path', value: '' },
      });
      expect(top.completion.values).toEqual(['docs/']);
      expect(top.completion.total).toBe(1);
      for (const value of [
        's',
        'se',
        'secrets',
        'secrets/',
        `secrets/${SECRET_NAME.slice(0, 4)}`,
        'secrets/inner/',
        '%73ecrets/',
        'docs/../secrets/',
        'docs/../',
        '../',
      ]) {
        const answer = await settle(
          client.complete({
            ref: { type: 'ref/resource', uri: uriTemplate },
            argument: { name: 'path', value },
          }),
        );
        if (!answer.ok) continue; // refusing the value outright is fine too
        expect(answer.value.completion.values, value).toEqual([]);
        expect(answer.value.completion.total ?? 0, value).toBe(0);
        expect(answer.value.completion.hasMore ?? false, value).toBe(false);
      }
      const inside = await client.complete({
        ref: { type: 'ref/resource', uri: uriTemplate },
        argument: { name: 'path', value: 'docs/' },
      });
      expect(inside.completion.values).toContain('docs/guide.md');
    }
    const adminTop = await adminClient.complete({
      ref: { type: 'ref/resource', uri: `${base}{+path}` },
      argument: { name: 'path', value: '' },
    });
    expect(adminTop.completion.values).toContain('secrets/');
  });

  it('fetches a prompt embedding a secrets/ resource as not found, and one embedding docs/ whole', async () => {
    for (const name of ['leak', 'leak-encoded']) {
      const outcome = await settle(client.getPrompt({ name }));
      expect(outcome.ok, name).toBe(false);
      if (!outcome.ok) expect(String((outcome.error as Error).message)).toMatch(/not found/i);
    }
    const guide = await client.getPrompt({ name: 'guide' });
    expect(guide.messages[0]?.content).toMatchObject({
      type: 'resource',
      resource: { text: 'Public text of docs/guide.md.\n' },
    });
  });

  it('gets nothing out of secrets/ through any built-in tool', async () => {
    // list_resources, every page.
    let cursor: string | undefined;
    const listed: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const result = await client.callTool({
        name: 'list_resources',
        arguments: { limit: 2, ...(cursor === undefined ? {} : { cursor }) },
      });
      expect(result.isError ?? false).toBe(false);
      const structured = result.structuredContent as {
        resources: { uri: string }[];
        nextCursor?: string;
      };
      listed.push(...structured.resources.map((r) => r.uri));
      cursor = structured.nextCursor;
      if (cursor === undefined) break;
    }
    expect(listed.sort()).toEqual(DOCS.map((rel) => `${base}${rel}`).sort());

    // read_resource, every spelling: an isError result like a missing file's.
    const missing = await client.callTool({
      name: 'read_resource',
      arguments: { uri: `${base}docs/no-such-file.md` },
    });
    expect(missing.isError).toBe(true);
    for (const uri of secretSpellings()) {
      const result = await client.callTool({ name: 'read_resource', arguments: { uri } });
      expect(result.isError, uri).toBe(true);
      expect(textOf(result), uri).not.toContain(SECRET);
    }
    const guide = await client.callTool({
      name: 'read_resource',
      arguments: { uri: `${base}docs/guide.md` },
    });
    expect(guide.isError ?? false).toBe(false);

    // find_resources: under secrets/, by name glob, by path glob, everything.
    const find = async (args: Record<string, unknown>): Promise<string[]> => {
      const result = await client.callTool({ name: 'find_resources', arguments: args });
      if (result.isError === true) return [];
      return (result.structuredContent as { resources: { uri: string }[] }).resources.map(
        (r) => r.uri,
      );
    };
    expect(await find({ under: `${base}secrets/` })).toEqual([]);
    expect(await find({ under: `${base}%73ecrets/` })).toEqual([]);
    expect(await find({ name: 'vault-*' })).toEqual([]);
    expect(await find({ name: '*.txt' })).toEqual([]);
    expect(await find({ name: 'secrets/**' })).toEqual([]);
    expect(await find({ name: '**/*' })).toEqual(
      expect.arrayContaining(DOCS.map((rel) => `${base}${rel}`)),
    );
    expect((await find({ name: '**/*' })).every((uri) => uri.startsWith(`${base}docs/`))).toBe(
      true,
    );
    expect((await find({ mimeType: 'text/plain' })).length).toBe(0);
  });

  it('refuses subscriptions to secrets/', async () => {
    const docsUri = `${base}docs/guide.md`;
    if (era === '2025') {
      // The SDK client rejects; on the raw wire the error is the 2025 resource-not-found code.
      expect((await settle(client.subscribeResource({ uri: secretUri }))).ok).toBe(false);
      const session = await AuthedLegacySession.open(endpoint.url, docs.token, log);
      try {
        for (const uri of [
          secretUri,
          `${base}%73ecrets/${SECRET_NAME}`,
          `${base}docs/../secrets/${SECRET_NAME}`,
          `${base}secrets/`,
        ]) {
          const { message } = await session.request('resources/subscribe', { uri });
          expect(message?.error?.code, uri).toBe(-32002);
          // Like a missing resource: data is exactly { uri } (the URI as sent, or its canonical form).
          expect(Object.keys((message?.error?.data ?? {}) as object), uri).toEqual(['uri']);
        }
        const missing = await session.request('resources/subscribe', {
          uri: `${base}docs/no-such-file.md`,
        });
        expect(missing.message?.error?.code).toBe(-32002);
        const ok = await session.request('resources/subscribe', { uri: docsUri });
        expect(ok.message?.result).toEqual({});
      } finally {
        await session.close();
      }
    } else {
      const subscription = await client.listen({
        resourceSubscriptions: [
          secretUri,
          `${base}%73ecrets/${SECRET_NAME}`,
          `${base}secrets/`,
          docsUri,
        ],
      });
      try {
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual([docsUri]);
      } finally {
        await subscription.close();
      }
    }
  });

  it('refuses a cursor minted for another principal, both ways', async () => {
    const mine = await listPage(client);
    expect(mine.nextCursor).toBeDefined();
    const stolen = await settle(listPage(adminClient, mine.nextCursor));
    expect(stolen.ok).toBe(false);
    if (!stolen.ok) expect(errorCode(stolen.error)).toBe(-32602);
    const theirs = await listPage(adminClient);
    expect(theirs.nextCursor).toBeDefined();
    const borrowed = await settle(listPage(client, theirs.nextCursor));
    expect(borrowed.ok).toBe(false);
    if (!borrowed.ok) expect(String((borrowed.error as Error).message)).toMatch(/cursor/i);
  });

  it.runIf(era === '2026')('marks results cacheScope private', async () => {
    const list = (await listPage(client)) as Record<string, unknown>;
    expect(list['cacheScope']).toBe('private');
    const read = (await client.request({
      method: 'resources/read',
      params: { uri: `${base}docs/guide.md` },
    })) as Record<string, unknown>;
    expect(read['cacheScope']).toBe('private');
  });

  it('never let a secret byte through, in any response', async () => {
    await expectNothingLeaked();
  });
});

describe('sessions, credentials and the side endpoints', () => {
  it('answers a 2025 session id presented by another principal with 404', async () => {
    const session = await AuthedLegacySession.open(endpoint.url, docs.token, log);
    try {
      const own = await session.request('resources/list');
      expect(own.raw.status).toBe(200);
      for (const other of [admin, nobody, most]) {
        const stolen = await session.request('resources/list', {}, other.token);
        expect(stolen.raw.status, other.name).toBe(404);
        expect(stolen.raw.body, other.name).not.toContain('docs/');
      }
      const anonymous = await rawHttp(endpoint.url, {
        headers: { ...session.headers(), authorization: '' },
        body: '{"jsonrpc":"2.0","id":9,"method":"resources/list"}',
      });
      expect(anonymous.status).toBe(401);
    } finally {
      await session.close();
    }
  });

  it.each(ERAS)('shows a token without the scope nothing at all (%s era)', async (era) => {
    const client = await connectWithToken(era, endpoint.url, nobody.token, log);
    try {
      expect((await listAllPages(client)).flatMap((p) => p.resources)).toEqual([]);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
      expect((await client.listPrompts()).prompts).toEqual([]);
      expect((await client.listTools()).tools).toEqual([]);
      expect((await settle(client.readResource({ uri: `${base}docs/guide.md` }))).ok).toBe(false);
      expect((await settle(client.readResource({ uri: secretUri }))).ok).toBe(false);
      expect((await settle(client.getPrompt({ name: 'guide' }))).ok).toBe(false);
      expect(
        (await settle(client.callTool({ name: 'read_resource', arguments: { uri: secretUri } })))
          .ok,
      ).toBe(false);
      const completion = await settle(
        client.complete({
          ref: { type: 'ref/resource', uri: `${base}{+path}` },
          argument: { name: 'path', value: '' },
        }),
      );
      expect(completion.ok).toBe(false);
    } finally {
      await closeClient(client);
    }
  });

  it('refuses anonymous requests with 401 and a Bearer challenge', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} });
    const response = await rawHttp(endpoint.url, {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body,
    });
    expect(response.status).toBe(401);
    expect(String(response.headers['www-authenticate'])).toMatch(/^Bearer /);
    const wrong = await rawHttp(endpoint.url, {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer not-a-configured-token-0123456789abcdef',
      },
      body,
    });
    expect(wrong.status).toBe(401);
    expect(String(wrong.headers['www-authenticate'])).toContain('error="invalid_token"');
    await expect(connectWithToken('2025', endpoint.url, undefined)).rejects.toThrow();
    await expect(connectWithToken('2026', endpoint.url, undefined)).rejects.toThrow();
  });

  it('answers /healthz and /readyz without credentials; /metrics only with them', async () => {
    const origin = new URL(endpoint.url).origin;
    for (const path of ['/healthz', '/readyz']) {
      const response = await rawHttp(`${origin}${path}`, { method: 'GET' });
      expect(response.status, path).toBe(200);
      expect(response.body).not.toMatch(/ecret/);
    }
    const anonymous = await rawHttp(`${origin}/metrics`, { method: 'GET' });
    expect(anonymous.status).toBe(401);
    expect(String(anonymous.headers['www-authenticate'])).toMatch(/^Bearer /);
    const authed = await rawHttp(`${origin}/metrics`, {
      method: 'GET',
      headers: { authorization: `Bearer ${docs.token}` },
    });
    expect(authed.status).toBe(200);
    expect(authed.body).toContain('reservoir_requests_total');
    expect(authed.body).not.toContain(SECRET_NAME);
    expect(authed.body).not.toMatch(/ecret/);
  });

  it('still never let a secret byte through', async () => {
    await expectNothingLeaked();
  });
});

describe('cacheScope follows rules and tokens (2026 era)', () => {
  const cases: { name: string; rules: boolean; tokens: boolean; expected: string }[] = [
    { name: 'rules and tokens', rules: true, tokens: true, expected: 'private' },
    { name: 'tokens only', rules: false, tokens: true, expected: 'private' },
    { name: 'rules only (anonymous on loopback)', rules: true, tokens: false, expected: 'private' },
    { name: 'neither', rules: false, tokens: false, expected: 'public' },
  ];
  it.each(cases)('$name → $expected', async ({ rules, tokens, expected }) => {
    const server = createReservoir({
      providers: [filesProvider({ root })],
      ...(rules
        ? {
            access: new AccessPolicy({ rules: [{ principals: ['*'], allow: [`${base}docs/**`] }] }),
          }
        : {}),
    });
    const listening = await server.listen({
      host: '127.0.0.1',
      port: 0,
      ...(tokens
        ? {
            auth: createAuthenticator({
              tokens: [{ name: docs.name, sha256: docs.sha256, scopes: docs.scopes }],
            }),
          }
        : {}),
    });
    const client = await connectWithToken('2026', listening.url, tokens ? docs.token : undefined);
    try {
      expect(((await listPage(client)) as Record<string, unknown>)['cacheScope']).toBe(expected);
      const read = (await client.request({
        method: 'resources/read',
        params: { uri: `${base}docs/guide.md` },
      })) as Record<string, unknown>;
      expect(read['cacheScope']).toBe(expected);
    } finally {
      await closeClient(client);
      await server.close();
    }
  });
});

// A rule that allows the whole root but denies secrets/: here the spelling of a URI matters, since
// anything not caught by the deny is allowed.
describe.each(ERAS)('a token allowed everything but secrets/ (%s era)', (era: Era) => {
  let client: Client;
  beforeAll(async () => {
    client = await connectWithToken(era, endpoint.url, most.token, log);
  });
  afterAll(async () => {
    await closeClient(client);
  });

  it('cannot read secrets/ in any spelling (an empty path segment included)', async () => {
    for (const uri of secretSpellings().filter((u) => u !== base)) {
      const outcome = await settle(client.readResource({ uri }));
      expect(outcome.ok, uri).toBe(false);
    }
    for (const uri of [
      `${base}/secrets/${SECRET_NAME}`,
      `${base}secrets//${SECRET_NAME}`,
      `${base}/secrets/${SECRET_NAME}?lines=1-1`,
    ]) {
      const result = await client.callTool({ name: 'read_resource', arguments: { uri } });
      expect(result.isError, uri).toBe(true);
    }
    expect((await client.readResource({ uri: `${base}docs/guide.md` })).contents[0]).toMatchObject({
      text: 'Public text of docs/guide.md.\n',
    });
  });

  it('lists, completes and finds nothing under secrets/', async () => {
    const uris = (await listAllPages(client)).flatMap((p) => p.resources.map((r) => r.uri));
    expect(uris.sort()).toEqual(DOCS.map((rel) => `${base}${rel}`).sort());
    const top = await client.complete({
      ref: { type: 'ref/resource', uri: `${base}{+path}` },
      argument: { name: 'path', value: '' },
    });
    expect(top.completion.values).toEqual(['docs/']);
    const inside = await client.complete({
      ref: { type: 'ref/resource', uri: `${base}{+path}` },
      argument: { name: 'path', value: 'secrets/' },
    });
    expect(inside.completion.values).toEqual([]);
  });

  // KNOWN LEAK (reported): a directory read answers with the directory's children unfiltered, so
  // reading the root (which the rule allows) names the denied secrets/ directory and its URI.
  it('does not learn of secrets/ from a listing of the root directory', async () => {
    const outcome = await settle(client.readResource({ uri: base }));
    if (outcome.ok) {
      const text = outcome.value.contents.map((c) => ('text' in c ? c.text : '')).join('');
      expect(text).not.toContain('secrets');
    }
  });
});

// Access rules judge the URI asked for and, through a symbolic link, where it leads: a link under
// docs/ into secrets/ neither hands over the secret nor lets the docs token watch it change.
describe('a symbolic link under docs/ that points into secrets/', () => {
  let linkRoot: string;
  let linkBase: string;
  let server: Reservoir;
  let listening: HttpEndpoint;

  beforeAll(async () => {
    linkRoot = makeTempDir('reservoir-access-link-');
    writeTree(linkRoot, {
      'docs/guide.md': 'Public.\n',
      [`secrets/${SECRET_NAME}`]: `${SECRET}\n`,
    });
    symlinkSync(join('..', 'secrets', SECRET_NAME), join(linkRoot, 'docs', 'shortcut.txt'));
    linkBase = dirUri(linkRoot);
    server = createReservoir({
      providers: [filesProvider({ root: linkRoot })],
      access: new AccessPolicy({ rules: [{ scopes: ['docs'], allow: [`${linkBase}docs/**`] }] }),
    });
    listening = await server.listen({
      host: '127.0.0.1',
      port: 0,
      auth: createAuthenticator({
        tokens: [{ name: docs.name, sha256: docs.sha256, scopes: docs.scopes }],
      }),
    });
  });
  afterAll(async () => {
    await server?.close();
    removeTree(linkRoot);
  });

  it('does not hand the secret to the docs token', async () => {
    const client = await connectWithToken('2026', listening.url, docs.token);
    try {
      const outcome = await settle(client.readResource({ uri: `${linkBase}docs/shortcut.txt` }));
      const text = outcome.ok
        ? outcome.value.contents.map((c) => ('text' in c ? c.text : '')).join('')
        : '';
      expect(text).not.toContain(SECRET);
    } finally {
      await closeClient(client);
    }
  });

  it('refuses the docs token a 2025 subscription through the link, as if the link were missing', async () => {
    const session = await AuthedLegacySession.open(listening.url, docs.token, log);
    try {
      const refused = await session.request('resources/subscribe', {
        uri: `${linkBase}docs/shortcut.txt`,
      });
      expect(refused.message?.error?.code).toBe(-32002);
      expect(Object.keys((refused.message?.error?.data ?? {}) as object)).toEqual(['uri']);
      const ok = await session.request('resources/subscribe', { uri: `${linkBase}docs/guide.md` });
      expect(ok.message?.result).toEqual({});
    } finally {
      await session.close();
    }
  });

  it('leaves the link out of what a 2026-07-28 listen honours for the docs token', async () => {
    const client = await connectWithToken('2026', listening.url, docs.token);
    try {
      const subscription = await client.listen({
        resourceSubscriptions: [`${linkBase}docs/shortcut.txt`, `${linkBase}docs/guide.md`],
      });
      try {
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual([
          `${linkBase}docs/guide.md`,
        ]);
      } finally {
        await subscription.close();
      }
    } finally {
      await closeClient(client);
    }
  });
});
