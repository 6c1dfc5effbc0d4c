// Pins the HTTP provider's model: it keeps the provider contract against a local upstream; fixed
// endpoints are listed (sorted by URI) and endpoints with variables are templates with completion;
// JSON, text, binary and charset-labelled bodies read as text or blob like files do, with the
// upstream Content-Type as the MIME type; and config mistakes are ConfigErrors naming the field.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import {
  httpProvider,
  httpSourceOptions,
  PROVIDER_NAME,
  type HttpProvider,
} from '../../src/providers/http/index.js';
import { testProvider } from './contract.js';
import { ctx, expectNotFound, uris, walkProvider } from './helpers.js';
import { json, providerFor, respond, Upstream } from './http-upstream.js';

const BINARY = randomBytes(4096);

let upstream: Upstream;
/** What /mutable answers; the contract's watch case bumps it. */
let mutableVersion = 0;
beforeAll(async () => {
  upstream = await Upstream.start();
  upstream
    .route('/status', json({ ok: true }))
    .route('/readme', respond('# Hello\n\nwörld ✓\n', 'text/markdown; charset=utf-8'))
    .route('/logo', respond(BINARY, 'image/png'))
    .route(
      '/latin1',
      respond(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset=iso-8859-1'),
    )
    .route('/bad-utf8', respond(Buffer.from([0x68, 0xff, 0xfe]), 'text/plain'))
    .route('/untyped', respond('plain words', undefined))
    .route('/untyped-bin', respond(Buffer.from([0, 1, 2, 255]), undefined))
    .route('/vendor', respond('{"a":1}', 'application/vnd.api+json'))
    .route(
      '/mutable',
      (_req, res) =>
        void res.writeHead(200, { 'content-type': 'text/plain' }).end(`version ${mutableVersion}`),
    )
    .otherwise((req, res) => {
      const m = /^\/repos\/([^/]+)\/([^/?]+)$/.exec((req.url ?? '').split('?')[0]!);
      if (m === null) return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ owner: m[1], repo: m[2], query: req.url?.split('?')[1] ?? null }));
    });
});
afterAll(async () => {
  await upstream.close();
});

const ENDPOINTS = [
  { name: 'status', uri: 'status', upstream: 'status', mimeType: 'application/json' },
  {
    name: 'readme',
    uri: 'docs/readme',
    upstream: 'readme',
    title: 'Read me',
    description: 'The project read-me',
  },
  { name: 'logo', uri: 'logo.png', upstream: 'logo' },
  { name: 'latin1', uri: 'latin1', upstream: 'latin1' },
  { name: 'bad-utf8', uri: 'bad-utf8', upstream: 'bad-utf8' },
  { name: 'untyped', uri: 'untyped', upstream: 'untyped' },
  { name: 'untyped-bin', uri: 'untyped-bin', upstream: 'untyped-bin' },
  { name: 'vendor', uri: 'vendor', upstream: 'vendor' },
  {
    name: 'repo',
    uri: 'repos/{owner}/{repo}{?ref}',
    upstream: 'repos/{owner}/{repo}{?ref}',
    description: 'One repository',
    complete: { owner: ['octo', 'octocat', 'other', 'octo'] },
  },
];

const FIXED_URIS = [
  'api://t/bad-utf8',
  'api://t/docs/readme',
  'api://t/latin1',
  'api://t/logo.png',
  'api://t/status',
  'api://t/untyped',
  'api://t/untyped-bin',
  'api://t/vendor',
];

testProvider({
  name: 'http',
  setup: async () => {
    const provider = providerFor(upstream, {
      name: 't',
      pollMs: 50,
      endpoints: [...ENDPOINTS, { name: 'mutable', uri: 'mutable', upstream: 'mutable' }],
    });
    return {
      provider,
      knownUris: [...FIXED_URIS, 'api://t/mutable'],
      missingUri: 'api://t/nothing/here',
      cleanup: () => provider.close(),
      change: { uri: 'api://t/mutable', apply: () => void (mutableVersion += 1) },
      completion: {
        uriTemplate: 'api://t/repos/{owner}/{repo}{?ref}',
        variable: 'owner',
        value: 'octoc',
        expected: 'octocat',
      },
    };
  },
  additionalTests: (fixture) => {
    it('names itself and owns api://<name>/', () => {
      expect(fixture().provider.name).toBe(PROVIDER_NAME);
      expect(fixture().provider.root).toBe('api://t/');
    });
  },
});

describe('http provider: listing and templates', () => {
  let provider: HttpProvider;
  beforeAll(() => void (provider = providerFor(upstream, { name: 't', endpoints: ENDPOINTS })));
  afterAll(() => provider.close());

  it('lists the fixed endpoints sorted by URI, with their names, titles, descriptions and MIME types', async () => {
    const { items } = await walkProvider(provider, 3);
    expect(uris(items)).toEqual(FIXED_URIS);
    expect(items.find((i) => i.uri === 'api://t/docs/readme')).toEqual({
      uri: 'api://t/docs/readme',
      name: 'readme',
      title: 'Read me',
      description: 'The project read-me',
    });
    expect(items.find((i) => i.uri === 'api://t/status')?.mimeType).toBe('application/json');
  });

  it('serves endpoints with variables as templates, not as listed resources', () => {
    const templates = provider.templates!();
    expect(
      templates.map((t) => ({
        uriTemplate: t.uriTemplate,
        name: t.name,
        description: t.description,
      })),
    ).toEqual([
      {
        uriTemplate: 'api://t/repos/{owner}/{repo}{?ref}',
        name: 'repo',
        description: 'One repository',
      },
    ]);
  });

  it('completes a variable from its configured values by prefix, without duplicates', async () => {
    const complete = provider.templates!()[0]!.complete!['owner']!;
    expect(await complete('oc', {}, ctx())).toEqual({
      values: ['octo', 'octocat'],
      total: 2,
      hasMore: false,
    });
    expect(await complete('', {}, ctx())).toEqual({
      values: ['octo', 'octocat', 'other'],
      total: 3,
      hasMore: false,
    });
    expect(provider.templates!()[0]!.complete!['repo']).toBeUndefined();
  });

  it('reads a template URI through the registry and through the provider alike', async () => {
    const registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(
      providerFor(upstream, { name: 't', endpoints: ENDPOINTS }),
    );
    try {
      const viaRegistry = await registry.read('api://t/repos/octo/hello?ref=main', ctx());
      const direct = await provider.read('api://t/repos/octo/hello?ref=main', ctx());
      expect(viaRegistry.contents).toEqual(direct.contents);
      expect(JSON.parse((direct.contents[0] as { text: string }).text)).toEqual({
        owner: 'octo',
        repo: 'hello',
        query: 'ref=main',
      });
      const noRef = await registry.read('api://t/repos/octo/hello', ctx());
      expect(JSON.parse((noRef.contents[0] as { text: string }).text)).toEqual({
        owner: 'octo',
        repo: 'hello',
        query: null,
      });
    } finally {
      await registry.close();
    }
  });

  it('answers NotFoundError for URIs no endpoint names: extra segments, unknown or repeated query parameters, fragments', async () => {
    for (const uri of [
      'api://t/repos/octo',
      'api://t/repos/octo/hello/extra',
      'api://t/repos/octo/hello?branch=main',
      'api://t/repos/octo/hello?ref=a&ref=b',
      'api://t/status?x=1',
      'api://t/status#frag',
      'api://t/',
      'api://other/status',
    ]) {
      await expectNotFound(provider.read(uri, ctx()), uri);
    }
  });

  it('maps an upstream 404 to NotFoundError', async () => {
    const missing = providerFor(upstream, {
      name: 't',
      endpoints: [{ name: 'gone', uri: 'gone', upstream: 'no/such/path' }],
    });
    await expectNotFound(missing.read('api://t/gone', ctx()), 'api://t/gone');
    await missing.close();
  });
});

describe('http provider: content', () => {
  let provider: HttpProvider;
  beforeAll(() => void (provider = providerFor(upstream, { name: 't', endpoints: ENDPOINTS })));
  afterAll(() => provider.close());
  const read = async (uri: string) => (await provider.read(uri, ctx())).contents[0]!;

  it('reads JSON as text with the upstream MIME type', async () => {
    expect(await read('api://t/status')).toEqual({
      uri: 'api://t/status',
      mimeType: 'application/json',
      text: '{"ok":true}',
    });
    expect(await read('api://t/vendor')).toEqual({
      uri: 'api://t/vendor',
      mimeType: 'application/vnd.api+json',
      text: '{"a":1}',
    });
  });

  it('reads UTF-8 text with the Content-Type essence (parameters dropped)', async () => {
    expect(await read('api://t/docs/readme')).toEqual({
      uri: 'api://t/docs/readme',
      mimeType: 'text/markdown',
      text: '# Hello\n\nwörld ✓\n',
    });
  });

  it('reads binary as a base64 blob that round-trips byte for byte', async () => {
    const content = await read('api://t/logo.png');
    expect(content.mimeType).toBe('image/png');
    expect(Buffer.from((content as { blob: string }).blob, 'base64').equals(BINARY)).toBe(true);
  });

  it('transcodes a declared non-UTF-8 charset to UTF-8 text', async () => {
    expect(await read('api://t/latin1')).toEqual({
      uri: 'api://t/latin1',
      mimeType: 'text/plain',
      text: 'café',
    });
  });

  it('serves text/* bytes that are not valid UTF-8 as a blob', async () => {
    const content = await read('api://t/bad-utf8');
    expect('blob' in content && Buffer.from(content.blob, 'base64')).toEqual(
      Buffer.from([0x68, 0xff, 0xfe]),
    );
  });

  it('sniffs a body without Content-Type like a file of unknown extension', async () => {
    expect(await read('api://t/untyped')).toEqual({
      uri: 'api://t/untyped',
      mimeType: 'text/plain',
      text: 'plain words',
    });
    expect(await read('api://t/untyped-bin')).toMatchObject({
      mimeType: 'application/octet-stream',
      blob: Buffer.from([0, 1, 2, 255]).toString('base64'),
    });
  });
});

describe('http provider: configuration', () => {
  const base = {
    name: 'gh',
    baseUrl: 'https://api.example.com/v3',
    endpoints: [{ name: 'a', uri: 'a', upstream: 'a' }],
  };
  const refused = (patch: Record<string, unknown>, field: RegExp): void => {
    let error: unknown;
    try {
      httpProvider({ ...base, ...patch } as Parameters<typeof httpProvider>[0]);
    } catch (e) {
      error = e;
    }
    expect(error, JSON.stringify(patch)).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).data['field']).toMatch(field);
  };

  it('accepts a valid source and exposes the same schema for the config file', async () => {
    expect(httpSourceOptions.safeParse(base).success).toBe(true);
    const provider = httpProvider(base);
    expect(provider.root).toBe('api://gh/');
    await provider.close();
  });

  it('refuses bad names, base URLs, headers, limits and networks', () => {
    refused({ name: 'Has Space' }, /^name$/);
    refused({ baseUrl: 'ftp://example.com/' }, /^baseUrl$/);
    refused({ baseUrl: 'file:///etc/passwd' }, /^baseUrl$/);
    refused({ baseUrl: 'https://user:pw@example.com/' }, /^baseUrl$/);
    refused({ baseUrl: 'https://example.com/?key=1' }, /^baseUrl$/);
    refused({ headers: { 'X-Evil': 'a\r\nHost: other' } }, /^headers/);
    refused({ headers: { Host: 'other.example' } }, /^headers/);
    refused({ headers: { 'Bad Name': 'x' } }, /^headers/);
    refused({ timeoutMs: 0 }, /^timeoutMs$/);
    refused({ pollMs: 1 }, /^pollMs$/);
    refused({ allowedNetworks: ['10.0.0.0/33'] }, /^allowedNetworks\.0$/);
    refused({ allowedNetworks: ['example.com'] }, /^allowedNetworks\.0$/);
    refused({ endpoints: [] }, /^endpoints$/);
  });

  it('refuses endpoint templates that could let a value escape its segment or the base URL', () => {
    const endpoint = (uri: string, upstream: string) => ({
      endpoints: [{ name: 'e', uri, upstream }],
    });
    refused(endpoint('x/{a}', 'x/{+a}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}', 'x{#a}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}', 'x{/a*}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}', 'https://other.example.com/{a}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}', 'https://api.example.com/v4/{a}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}', '../{a}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}', 'x/{b}'), /endpoints\.0\.upstream/);
    refused(endpoint('x{?q}', 'x/{q}'), /endpoints\.0\.upstream/);
    refused(endpoint('x/{a}{b}', 'x/{a}'), /endpoints\.0\.uri/);
    refused(endpoint('x/{a}/{a}', 'x/{a}'), /endpoints\.0\.uri/);
    refused(endpoint('api://other/x', 'x'), /endpoints\.0\.uri/);
    refused(endpoint('x/../y', 'x'), /endpoints\.0\.uri/);
    refused(endpoint('x y', 'x'), /endpoints\.0\.uri/);
    refused(
      { endpoints: [{ name: 'e', uri: 'x/{a}', upstream: 'x/{a}', complete: { b: ['1'] } }] },
      /endpoints\.0\.complete\.b/,
    );
    refused(
      {
        endpoints: [
          { name: 'e', uri: 'a', upstream: 'a' },
          { name: 'e', uri: 'b', upstream: 'b' },
        ],
      },
      /endpoints\.1\.name/,
    );
    refused(
      {
        endpoints: [
          { name: 'e', uri: 'a', upstream: 'a' },
          { name: 'f', uri: 'a', upstream: 'b' },
        ],
      },
      /endpoints\.1\.uri/,
    );
  });

  it('accepts absolute upstreams under the base, literal queries and query variables in the query', async () => {
    const provider = httpProvider({
      ...base,
      endpoints: [
        {
          name: 'a',
          uri: 'api://gh/search{?q,page}',
          upstream: 'https://api.example.com/v3/search?per_page=10{&q,page}',
        },
        { name: 'b', uri: 'items/{id}.json', upstream: '/items/{id}' },
        { name: 'c', uri: 'find{?q}', upstream: 'find?query={q}' },
      ],
    });
    expect(provider.templates!().map((t) => t.uriTemplate)).toEqual([
      'api://gh/search{?q,page}',
      'api://gh/items/{id}.json',
      'api://gh/find{?q}',
    ]);
    await provider.close();
  });
});
