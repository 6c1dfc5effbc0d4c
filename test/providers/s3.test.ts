// The s3 provider against a real S3 API server (s3rver on loopback): the provider contract, keys
// S3 allows that URIs must carry (spaces, #, %, ?, +, unicode, a trailing /), 10,000 keys in
// pages, binary round-trips, byte ranges, completion, change detection, refused credentials, the
// endpoint address rules, and the server going away mid-list.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  NotFoundError,
  TooLargeError,
  UnavailableError,
} from '../../src/core/errors.js';
import { encodeKey, isAddressableKey, keyUri, parseS3Uri } from '../../src/providers/s3/address.js';
import { s3Provider, type S3Provider } from '../../src/providers/s3/index.js';
import { testProvider } from './contract.js';
import { ctx, rejection, uris, walkProvider } from './helpers.js';
import { LocalS3 } from './s3-server.js';

const ODD_KEYS = [
  'a b.txt',
  'hash#tag.txt',
  'per%cent.txt',
  'what?.txt',
  'plus+sign.txt',
  'ünï/cödé.md',
  "quote'(x).txt",
  'dir/inner.txt',
  'marker/',
];
const BINARY = randomBytes(4096);

let s3: LocalS3;
let version = 1;

beforeAll(async () => {
  s3 = await LocalS3.start();
  await s3.bucket('odd-keys');
  await s3.putMany('odd-keys', [
    ...ODD_KEYS.map((key) => [key, key.endsWith('/') ? '' : `content of ${key}`] as const),
    ['bin/blob.bin', BINARY],
    ['big/large.txt', 'x'.repeat(5000)],
    ['watched/w.txt', 'version 1'],
  ]);
}, 60_000);
// Removing the server's directory (10,000 keys and more) takes tens of seconds on a loaded machine.
afterAll(async () => {
  await s3?.close();
}, 180_000);

testProvider({
  name: 's3',
  setup: async () => ({
    provider: s3Provider(s3.source('odd-keys', { pollIntervalMs: 50 })),
    knownUris: ODD_KEYS.filter((key) => !key.endsWith('/')).map((key) => keyUri('odd-keys', key)),
    missingUri: 's3://odd-keys/no/such/key.txt',
    cleanup: () => undefined,
    change: {
      uri: keyUri('odd-keys', 'watched/w.txt'),
      apply: () => s3.put('odd-keys', 'watched/w.txt', `version ${(version += 1)}`),
    },
    directoryUri: 's3://odd-keys/dir/',
    completion: {
      uriTemplate: 's3://odd-keys/{+key}{?bytes}',
      variable: 'key',
      value: 'ha',
      expected: 'hash%23tag.txt',
    },
  }),
});

describe('s3:// URIs', () => {
  it('round-trips every key through its URI, empty segments and a trailing slash included', () => {
    for (const key of [
      ...ODD_KEYS,
      'a//b',
      '/lead',
      'x/',
      '日本/語',
      '%41',
      '~.-_',
      'tab\tnew\nline',
    ]) {
      const uri = keyUri('b1x', key);
      expect(parseS3Uri('b1x', uri).key, uri).toBe(key);
      expect(uri.includes('#') || uri.slice(5).includes('?'), uri).toBe(false);
    }
    expect(encodeKey('a b/c#d')).toBe('a%20b/c%23d');
  });

  it('escapes every ASCII character of a key but the unreserved ones and the separator', () => {
    for (let code = 0; code < 128; code += 1) {
      const c = String.fromCharCode(code);
      const kept = /[A-Za-z0-9\-._~/]/.test(c);
      const escaped = `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
      expect(encodeKey(`a${c}b/c`), JSON.stringify(c)).toBe(`a${kept ? c : escaped}b/c`);
    }
  });

  it('leaves out keys with a . or .. segment, which URI normalisation would fold into another key', () => {
    for (const key of [
      'a/../b',
      './x',
      'a/.',
      '..',
      'a/%2e%2E/b',
      'a/..\\b',
      'a/%252e%252e',
      '\uFF0E\uFF0E/x',
    ])
      expect(isAddressableKey(key), key).toBe(false);
    for (const key of ['a/..b', '.hidden/x', 'a/.../b', 'a//b'])
      expect(isAddressableKey(key), key).toBe(true);
  });

  it('refuses a malformed escape, an unknown query and a reversed range with the reason', () => {
    expect(() => parseS3Uri('b1x', 's3://b1x/bad%zz')).toThrow(/malformed percent-encoding/);
    expect(() => parseS3Uri('b1x', 's3://b1x/k?lines=1-2')).toThrow(
      /unknown query parameter 'lines'/,
    );
    expect(() => parseS3Uri('b1x', 's3://b1x/k?bytes=9-3')).toThrow(
      /END \(3\) is before START \(9\)/,
    );
    expect(() => parseS3Uri('b1x', 's3://b1x/k?bytes=0-1&bytes=2-3')).toThrow(
      /'bytes' is given more than once/,
    );
    expect(() => parseS3Uri('b1x', 's3://b1x/dir/?bytes=0-3')).toThrow(/not of a prefix/);
  });
});

describe('s3 provider', () => {
  let provider: S3Provider;
  beforeAll(() => {
    provider = s3Provider({ ...s3.source('odd-keys'), maxReadBytes: 4096 });
  });
  afterAll(async () => {
    await provider.close();
  });

  it('lists odd keys under URIs that read back their exact content', async () => {
    const listed = uris((await walkProvider(provider, 3)).items);
    for (const key of ODD_KEYS.filter((k) => !k.endsWith('/'))) {
      const uri = keyUri('odd-keys', key);
      expect(listed).toContain(uri);
      const read = await provider.read(uri, ctx());
      expect(read.contents[0]).toMatchObject({ uri, text: `content of ${key}` });
    }
  });

  it('lists size, last modified and the ETag of each object', async () => {
    const item = (await walkProvider(provider, 100)).items.find(
      (i) => i.uri === 's3://odd-keys/a%20b.txt',
    )!;
    expect(item).toMatchObject({
      name: 'a b.txt',
      size: 'content of a b.txt'.length,
      mimeType: 'text/plain',
    });
    expect(item.description).toMatch(/^ETag "[0-9a-f]{32}"$/);
    expect(Date.parse(item.annotations!.lastModified!)).toBeGreaterThan(0);
  });

  it('reads binary content back byte for byte', async () => {
    const read = await provider.read('s3://odd-keys/bin/blob.bin', ctx());
    expect(Buffer.from((read.contents[0] as { blob: string }).blob, 'base64').equals(BINARY)).toBe(
      true,
    );
  });

  it('answers a percent-encoding variant with the canonical URI', async () => {
    expect(await provider.canonical!('s3://odd-keys/%61%20b.txt', ctx())).toBe(
      's3://odd-keys/a%20b.txt',
    );
    expect(await provider.canonical!('s3://odd-keys/a%20b.txt?bytes=0-3', ctx())).toBe(
      's3://odd-keys/a%20b.txt',
    );
    await expect(provider.canonical!('s3://odd-keys/nothing-here', ctx())).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('refuses an object over the read cap and serves it by byte range', async () => {
    const error = await rejection(provider.read('s3://odd-keys/big/large.txt', ctx()));
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).message).toContain('5000 bytes');
    const slice = await provider.read('s3://odd-keys/big/large.txt?bytes=4990-5100', ctx());
    expect(slice.contents[0]).toMatchObject({
      uri: 's3://odd-keys/big/large.txt?bytes=4990-5100',
      text: 'x'.repeat(10),
    });
    // START past the end is refused as it is for every source, naming the object's size.
    const past = await rejection(
      provider.read('s3://odd-keys/big/large.txt?bytes=9000-9001', ctx()),
    );
    expect(past).toBeInstanceOf(InvalidArgumentError);
    expect((past as InvalidArgumentError).message).toMatch(
      /past the last byte \(4999\) of this 5000-byte/,
    );
    // END past the end is clamped: a span within the cap once clamped is served.
    const clamped = await provider.read('s3://odd-keys/big/large.txt?bytes=1000-999999', ctx());
    expect((clamped.contents[0] as { text: string }).text).toHaveLength(4000);
    expect(
      await rejection(provider.read('s3://odd-keys/big/large.txt?bytes=0-5000', ctx())),
    ).toBeInstanceOf(TooLargeError);
  });

  it('reads a prefix ending in / as one JSON listing of its keys and sub-prefixes', async () => {
    const read = await provider.read('s3://odd-keys/', ctx());
    expect(read.contents[0]).toMatchObject({ uri: 's3://odd-keys/', mimeType: 'inode/directory' });
    const entries = JSON.parse((read.contents[0] as { text: string }).text) as {
      name: string;
      uri: string;
      kind: string;
    }[];
    expect(entries).toContainEqual({ name: 'dir/', uri: 's3://odd-keys/dir/', kind: 'directory' });
    expect(entries.find((e) => e.name === 'a b.txt')).toMatchObject({
      uri: 's3://odd-keys/a%20b.txt',
      kind: 'file',
    });
    const hidden = await provider.read('s3://odd-keys/', {
      ...ctx(),
      allows: (_op, uri) => !uri.includes('hash'),
    });
    expect((hidden.contents[0] as { text: string }).text).not.toContain('hash');
    await expect(provider.read('s3://odd-keys/nope/', ctx())).rejects.toBeInstanceOf(NotFoundError);
  });

  it('completes keys by prefix, one / level at a time', async () => {
    const template = provider.templates!()[0]!;
    expect(template.uriTemplate).toBe('s3://odd-keys/{+key}{?bytes}');
    const top = await template.complete!['key']!('d', {}, ctx());
    expect(top.values).toEqual(['dir/']);
    const inner = await template.complete!['key']!('dir/', {}, ctx());
    expect(inner.values).toEqual(['dir/inner.txt']);
    const unicode = await template.complete!['key']!('ün', {}, ctx());
    expect(unicode.values).toEqual([encodeKey('ünï/')]);
  });

  it('reports a change of a watched object once its ETag changes, polling only its prefix', async () => {
    const watcher = s3Provider({ ...s3.source('odd-keys'), pollIntervalMs: 50 });
    try {
      let changes = 0;
      const stop = await watcher.watch!('s3://odd-keys/dir/inner.txt', () => void (changes += 1));
      expect(watcher.watchedPrefixes()).toBe(1);
      await s3.put('odd-keys', 'dir/inner.txt', 'changed content');
      await expect.poll(() => changes, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(1);
      stop();
      expect(watcher.watchedPrefixes()).toBe(0);
      await expect(
        watcher.watch!('s3://odd-keys/dir/missing.txt', () => undefined),
      ).rejects.toBeInstanceOf(NotFoundError);
    } finally {
      await s3.put('odd-keys', 'dir/inner.txt', 'content of dir/inner.txt');
      await watcher.close();
    }
  });

  it('refuses wrong credentials with an unavailable error that names no secret', async () => {
    const wrong = s3Provider({
      ...s3.source('odd-keys'),
      accessKeyId: 'WRONGKEY',
      secretAccessKey: 'very-secret-value',
    });
    try {
      const error = await rejection(wrong.list(undefined, 10, ctx()));
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as Error).message).toMatch(/access denied by S3 .*credentials/);
      expect(
        JSON.stringify({
          message: (error as Error).message,
          data: (error as UnavailableError).data,
        }),
      ).not.toContain('very-secret-value');
      await expect(wrong.ready!()).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await wrong.close();
    }
  });

  it('refuses a loopback endpoint unless private networks are allowed', async () => {
    expect(() => s3Provider({ ...s3.source('odd-keys'), allowPrivateNetworks: false })).toThrow(
      /127\.0\.0\.1 is loopback/,
    );
    const named = s3Provider({
      ...s3.source('odd-keys'),
      endpoint: s3.endpoint.replace('127.0.0.1', 'localhost'),
      allowPrivateNetworks: false,
    });
    try {
      const error = await rejection(named.list(undefined, 10, ctx()));
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as Error).message).toMatch(/loopback/);
    } finally {
      await named.close();
    }
  });

  it('refuses bad options with the field and the reason', () => {
    expect(() => s3Provider({ bucket: 'No_Such' })).toThrow(/bucket.*S3 bucket name/);
    expect(() => s3Provider({ bucket: 'fine-bucket', prefix: 'docs' })).toThrow(
      /prefix.*ending in '\/'/,
    );
    expect(() => s3Provider({ bucket: 'fine-bucket', accessKeyId: 'only-the-id' })).toThrow(
      /secretAccessKey.*together/,
    );
    expect(() => s3Provider({ bucket: 'fine-bucket', buckets: 'typo' } as never)).toThrow(
      /unknown option 'buckets'; known: bucket,name,prefix/,
    );
  });
});

describe('s3 provider with 10,000 keys', () => {
  const COUNT = 10_000;
  beforeAll(async () => {
    await s3.bucket('many-keys');
    await s3.putMany(
      'many-keys',
      Array.from({ length: COUNT }, (_, i) => [`k/${String(i).padStart(5, '0')}`, `${i}`] as const),
      32,
    );
  }, 300_000);

  it('lists all 10,000 keys in keyset pages, in order, without repeats or gaps', async () => {
    const provider = s3Provider(s3.source('many-keys'));
    try {
      const walk = await walkProvider(provider, 1000);
      expect(walk.pages.length).toBe(10);
      expect(walk.items.map((i) => i.name)).toEqual(
        Array.from({ length: COUNT }, (_, i) => `k/${String(i).padStart(5, '0')}`),
      );
      // Resuming from a key this provider did not hand out (no remembered token) uses StartAfter.
      const fresh = s3Provider(s3.source('many-keys'));
      const page = await fresh.list('k/04999', 3, ctx());
      expect(page.items.map((i) => i.name)).toEqual(['k/05000', 'k/05001', 'k/05002']);
      await fresh.close();
    } finally {
      await provider.close();
    }
  }, 120_000);
});

describe('s3 provider reading a listing ahead', () => {
  beforeAll(async () => {
    await s3.bucket('read-ahead');
    await s3.putMany(
      'read-ahead',
      Array.from({ length: 40 }, (_, i) => [`k/${String(i).padStart(2, '0')}`, `${i}`] as const),
      8,
    );
  }, 60_000);

  it("asks the store for a client's next page while it reads the one it has, once it is past the first", async () => {
    // a proxy in front of the store records each listing request's resume point, in order
    const asked: string[] = [];
    const waiters: (() => void)[] = [];
    const proxy = createServer((req, res) => {
      const url = new URL(req.url!, 'http://proxy');
      if (url.searchParams.get('list-type') === '2')
        asked.push(url.searchParams.get('continuation-token') === null ? 'first' : 'token');
      for (const wake of waiters.splice(0)) wake();
      const upstream = request(
        `${s3.endpoint}${req.url}`,
        { method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      // a request read ahead and aborted when the provider closes ends either side mid-way
      upstream.on('error', () => res.destroy());
      res.on('error', () => upstream.destroy());
      req.pipe(upstream);
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const { port } = proxy.address() as AddressInfo;
    const asks = async (n: number): Promise<void> => {
      while (asked.length < n) await new Promise<void>((wake) => waiters.push(wake));
    };
    const provider = s3Provider({
      ...s3.source('read-ahead'),
      endpoint: `http://127.0.0.1:${port}`,
    });
    try {
      const first = await provider.list(undefined, 10, ctx());
      const second = await provider.list(first.last, 10, ctx());
      expect(asked).toEqual(['first', 'token']);
      // the third page is asked for before the client asks for it
      await asks(3);
      const third = await provider.list(second.last, 10, ctx());
      expect(third.items.map((i) => i.name)).toEqual(
        Array.from({ length: 10 }, (_, i) => `k/${20 + i}`),
      );
      // served from what was read ahead: the store was asked for the third page once, and the
      // fourth is under way
      await asks(4);
      expect(asked).toEqual(['first', 'token', 'token', 'token']);
    } finally {
      await provider.close();
      proxy.close();
    }
  }, 60_000);
});

describe('s3 server going away', () => {
  it('fails a list in progress with a clear unavailable error', async () => {
    const own = await LocalS3.start();
    await own.bucket('doomed');
    await own.putMany(
      'doomed',
      Array.from({ length: 20 }, (_, i) => [`f${i}`, 'x'] as const),
    );
    const provider = s3Provider(own.source('doomed'));
    try {
      const first = await provider.list(undefined, 5, ctx());
      expect(first.items).toHaveLength(5);
      await own.stop();
      const error = await rejection(provider.list(first.last, 5, ctx()));
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as Error).message).toMatch(
        /Resource unavailable: s3:\/\/doomed\/: S3 request failed \(ECONNREFUSED/,
      );
    } finally {
      await provider.close();
      await own.close();
    }
  });
});
