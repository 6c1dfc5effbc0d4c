// Pins the HTTP provider's cache, by counting the requests the upstream receives: a fresh response
// (max-age, Expires) is served without a request and with a ttlMs hint; a stale one is revalidated
// with If-None-Match / If-Modified-Since and a 304 serves the cached body; no-store and no-cache are
// honoured; Age shortens freshness; a changed body replaces the entry; and the cache stays within
// its byte bound, least recently used out first.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpProvider } from '../../src/providers/http/index.js';
import { ctx, expectNotFound } from './helpers.js';
import { providerFor, Upstream } from './http-upstream.js';

let upstream: Upstream;
let provider: HttpProvider | undefined;

beforeAll(async () => {
  upstream = await Upstream.start();
});
afterAll(async () => {
  await upstream.close();
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
  upstream.reset();
});

interface Version {
  body: string;
  headers: Record<string, string>;
}

/** A resource whose current version the test changes; answers 304 when the validator matches. */
function versioned(path: string, initial: Version): { set(v: Version): void } {
  let current = initial;
  upstream.route(path, (req: IncomingMessage, res: ServerResponse) => {
    const etag = current.headers['etag'];
    const lastModified = current.headers['last-modified'];
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    if (
      (etag !== undefined && inm === etag) ||
      (etag === undefined && lastModified !== undefined && ims === lastModified)
    ) {
      res.writeHead(304, current.headers).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', ...current.headers }).end(current.body);
  });
  return { set: (v) => void (current = v) };
}

function make(paths: string[], options: Parameters<typeof providerFor>[1] = {}): HttpProvider {
  provider = providerFor(upstream, {
    endpoints: paths.map((p) => ({ name: p, uri: p, upstream: p })),
    ...options,
  });
  return provider;
}

async function readText(
  p: HttpProvider,
  uri: string,
): Promise<{ text: string; ttlMs: number | undefined }> {
  const result = await p.read(uri, ctx());
  return { text: (result.contents[0] as { text: string }).text, ttlMs: result.ttlMs };
}

describe('http provider: cache', () => {
  it('serves a fresh response (max-age) without asking upstream, with a ttlMs hint', async () => {
    versioned('/fresh', { body: 'one', headers: { 'cache-control': 'max-age=60', etag: '"a"' } });
    const p = make(['fresh']);
    const first = await readText(p, 'api://test/fresh');
    expect(first.text).toBe('one');
    expect(first.ttlMs).toBeGreaterThan(55_000);
    expect(first.ttlMs).toBeLessThanOrEqual(60_000);
    for (let i = 0; i < 5; i += 1) expect((await readText(p, 'api://test/fresh')).text).toBe('one');
    expect(upstream.hits('/fresh')).toHaveLength(1);
  });

  it('revalidates a stale response with If-None-Match and serves the cached body on 304', async () => {
    versioned('/etag', {
      body: 'cached body',
      headers: { 'cache-control': 'max-age=0', etag: '"v1"' },
    });
    const p = make(['etag']);
    for (let i = 0; i < 4; i += 1) {
      const read = await readText(p, 'api://test/etag');
      expect(read.text).toBe('cached body');
      expect(read.ttlMs).toBeUndefined();
    }
    const hits = upstream.hits('/etag');
    expect(hits).toHaveLength(4);
    expect(hits[0]!.headers['if-none-match']).toBeUndefined();
    for (const hit of hits.slice(1)) expect(hit.headers['if-none-match']).toBe('"v1"');
  });

  it('revalidates with If-Modified-Since when only Last-Modified is known', async () => {
    const lastModified = 'Wed, 21 Oct 2015 07:28:00 GMT';
    versioned('/lm', { body: 'dated', headers: { 'last-modified': lastModified } });
    const p = make(['lm']);
    expect((await readText(p, 'api://test/lm')).text).toBe('dated');
    expect((await readText(p, 'api://test/lm')).text).toBe('dated');
    const hits = upstream.hits('/lm');
    expect(hits).toHaveLength(2);
    expect(hits[1]!.headers['if-modified-since']).toBe(lastModified);
  });

  it('replaces the cached body when revalidation returns a new version', async () => {
    const resource = versioned('/changing', {
      body: 'v1',
      headers: { 'cache-control': 'no-cache', etag: '"1"' },
    });
    const p = make(['changing']);
    expect((await readText(p, 'api://test/changing')).text).toBe('v1');
    resource.set({ body: 'v2', headers: { 'cache-control': 'no-cache', etag: '"2"' } });
    expect((await readText(p, 'api://test/changing')).text).toBe('v2');
    expect((await readText(p, 'api://test/changing')).text).toBe('v2');
    const hits = upstream.hits('/changing');
    expect(hits.map((h) => h.headers['if-none-match'])).toEqual([undefined, '"1"', '"2"']);
  });

  it('never stores a no-store response, even with an ETag', async () => {
    versioned('/nostore', {
      body: 'secret',
      headers: { 'cache-control': 'no-store, max-age=600', etag: '"x"' },
    });
    const p = make(['nostore']);
    for (let i = 0; i < 3; i += 1)
      expect(await readText(p, 'api://test/nostore')).toEqual({ text: 'secret', ttlMs: undefined });
    const hits = upstream.hits('/nostore');
    expect(hits).toHaveLength(3);
    for (const hit of hits) expect(hit.headers['if-none-match']).toBeUndefined();
    expect(p.stats().cacheEntries).toBe(0);
  });

  it('drops a stored entry when the upstream turns to no-store', async () => {
    const resource = versioned('/turns', {
      body: 'a',
      headers: { 'cache-control': 'max-age=0', etag: '"a"' },
    });
    const p = make(['turns']);
    await readText(p, 'api://test/turns');
    expect(p.stats().cacheEntries).toBe(1);
    resource.set({ body: 'b', headers: { 'cache-control': 'no-store' } });
    expect((await readText(p, 'api://test/turns')).text).toBe('b');
    expect(p.stats().cacheEntries).toBe(0);
  });

  it('counts the Age header against max-age', async () => {
    versioned('/aged', {
      body: 'old',
      headers: { 'cache-control': 'max-age=60', age: '60', etag: '"o"' },
    });
    const p = make(['aged']);
    await readText(p, 'api://test/aged');
    await readText(p, 'api://test/aged');
    expect(upstream.hits('/aged')).toHaveLength(2);
  });

  it('uses Expires when there is no max-age', async () => {
    const now = Date.now();
    versioned('/expires', {
      body: 'e',
      headers: {
        date: new Date(now).toUTCString(),
        expires: new Date(now + 120_000).toUTCString(),
      },
    });
    const p = make(['expires']);
    await readText(p, 'api://test/expires');
    const second = await readText(p, 'api://test/expires');
    expect(second.ttlMs).toBeGreaterThan(100_000);
    expect(upstream.hits('/expires')).toHaveLength(1);
  });

  it('does not keep a response it could neither serve fresh nor revalidate', async () => {
    versioned('/plain', { body: 'p', headers: {} });
    const p = make(['plain']);
    await readText(p, 'api://test/plain');
    await readText(p, 'api://test/plain');
    expect(upstream.hits('/plain')).toHaveLength(2);
    expect(p.stats().cacheEntries).toBe(0);
  });

  it('forgets a cached resource the upstream no longer has', async () => {
    let gone = false;
    upstream.route('/vanish', (_req, res) => {
      if (gone) return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': 'text/plain', etag: '"v"', 'cache-control': 'max-age=0' })
        .end('here');
    });
    const p = make(['vanish']);
    await readText(p, 'api://test/vanish');
    gone = true;
    await expectNotFound(p.read('api://test/vanish', ctx()), 'api://test/vanish');
    expect(p.stats().cacheEntries).toBe(0);
  });

  it('stays within its byte bound, evicting the least recently used entry first', async () => {
    const names = ['b1', 'b2', 'b3', 'b4'];
    for (const name of names)
      versioned(`/${name}`, {
        body: name.repeat(2000),
        headers: { 'cache-control': 'max-age=600' },
      });
    // Each entry accounts 4,000 text characters × 2 + overhead: three fit in 26,000 bytes, four do not.
    const p = make(names, { cacheMaxBytes: 26_000 });
    for (const name of ['b1', 'b2', 'b3']) await readText(p, `api://test/${name}`);
    await readText(p, 'api://test/b1'); // b1 is now the most recently used
    await readText(p, 'api://test/b4'); // evicts b2
    expect(p.stats().cacheBytes).toBeLessThanOrEqual(26_000);
    expect(p.stats().cacheEntries).toBe(3);
    upstream.reset();
    for (const name of ['b1', 'b3', 'b4', 'b2']) await readText(p, `api://test/${name}`);
    expect(upstream.requests.map((r) => r.url)).toEqual(['/b2']);
  });

  it('does not store an entry larger than the whole bound, and stores nothing with cacheMaxBytes 0', async () => {
    versioned('/big', { body: 'x'.repeat(50_000), headers: { 'cache-control': 'max-age=600' } });
    const small = make(['big'], { cacheMaxBytes: 10_000 });
    await readText(small, 'api://test/big');
    expect(small.stats()).toMatchObject({ cacheEntries: 0, cacheBytes: 0 });
    await small.close();
    const off = make(['big'], { cacheMaxBytes: 0 });
    await readText(off, 'api://test/big');
    await readText(off, 'api://test/big');
    expect(off.stats().cacheEntries).toBe(0);
    expect(upstream.hits('/big')).toHaveLength(3);
  });
});
