// Pins how the HTTP provider fails: upstream statuses map to NotFoundError / UnavailableError with
// the status; the deadline covers headers and body (UnavailableError with the limit) and a client's
// cancel stays a cancel; the size cap stops reading (declared, streamed or decompressed) with a
// TooLargeError carrying size and limit, never a truncated success; same-origin redirects are
// followed (bounded) and any other redirect is refused; configured secret headers are sent, and
// never appear in an error, its data or a log line.
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  NotFoundError,
  ReservoirError,
  TooLargeError,
  UnavailableError,
} from '../../src/core/errors.js';
import type { HttpProvider } from '../../src/providers/http/index.js';
import { eventually } from '../helpers/eventually.js';
import { MemoryLogger } from '../subscriptions/harness.js';
import { ctx, rejection } from './helpers.js';
import { providerFor, respond, Upstream } from './http-upstream.js';

const SECRET = 'Bearer s3cr3t-t0ken-DO-NOT-LEAK';
const API_KEY = 'k3y-DO-NOT-LEAK';

let upstream: Upstream;
let other: Upstream;
let provider: HttpProvider | undefined;
const logger = new MemoryLogger();
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  upstream = await Upstream.start();
  other = await Upstream.start();
  other.otherwise(respond('other origin', 'text/plain'));
  const status = (code: number) => respond(`status ${code} ${SECRET}`, 'text/plain', {}, code);
  upstream
    .route('/ok', respond('fine', 'text/plain'))
    .route('/s401', status(401))
    .route('/s403', status(403))
    .route('/s400', status(400))
    .route('/s410', status(410))
    .route('/s429', status(429))
    .route('/s500', status(500))
    .route('/s503', status(503))
    .route('/hang', () => undefined)
    .route('/trickle', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 50);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
    })
    .route('/declared-big', respond('x'.repeat(5000), 'text/plain'))
    .route('/chunked-big', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 50; i += 1) res.write('y'.repeat(100));
      res.end();
    })
    .route('/exact', respond('z'.repeat(1000), 'text/plain'))
    .route(
      '/gzip-bomb',
      respond(gzipSync(Buffer.alloc(1_000_000)), 'application/octet-stream', {
        'content-encoding': 'gzip',
      }),
    )
    .route(
      '/gzip-ok',
      respond(gzipSync('compressed text'), 'text/plain', { 'content-encoding': 'gzip' }),
    )
    .route('/weird-encoding', respond('abc', 'text/plain', { 'content-encoding': 'compress' }))
    .route('/redirect-same', (_req, res) => void res.writeHead(302, { location: '/ok' }).end())
    .route(
      '/redirect-absolute-same',
      (_req, res) => void res.writeHead(301, { location: `${upstream.origin}/ok` }).end(),
    )
    .route(
      '/redirect-loop',
      (_req, res) => void res.writeHead(307, { location: '/redirect-loop' }).end(),
    )
    .route(
      '/redirect-other',
      (_req, res) => void res.writeHead(302, { location: `${other.origin}/ok` }).end(),
    )
    .route(
      '/redirect-localhost',
      (_req, res) =>
        void res.writeHead(302, { location: `http://localhost:${upstream.port}/ok` }).end(),
    )
    .route(
      '/redirect-https',
      (_req, res) =>
        void res.writeHead(302, { location: `https://127.0.0.1:${upstream.port}/ok` }).end(),
    )
    .route(
      '/redirect-file',
      (_req, res) => void res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
    )
    .route(
      '/redirect-scheme-relative',
      (_req, res) => void res.writeHead(302, { location: `//localhost:${other.port}/ok` }).end(),
    );
});
afterAll(async () => {
  for (const timer of timers) clearInterval(timer);
  await upstream.close();
  await other.close();
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
  upstream.reset();
  other.reset();
});

const PATHS = [
  'ok',
  's401',
  's403',
  's400',
  's410',
  's429',
  's500',
  's503',
  'hang',
  'trickle',
  'declared-big',
  'chunked-big',
  'exact',
  'gzip-bomb',
  'gzip-ok',
  'weird-encoding',
  'redirect-same',
  'redirect-absolute-same',
  'redirect-loop',
  'redirect-other',
  'redirect-localhost',
  'redirect-https',
  'redirect-file',
  'redirect-scheme-relative',
];

function make(options: Parameters<typeof providerFor>[1] = {}): HttpProvider {
  provider = providerFor(upstream, {
    endpoints: PATHS.map((p) => ({ name: p, uri: p, upstream: p })),
    headers: { Authorization: SECRET, 'X-Api-Key': API_KEY },
    timeoutMs: 2_000,
    maxResponseBytes: 1000,
    logger,
    ...options,
  });
  return provider;
}

/** The read's error, checked to carry no secret anywhere a client or a log could see. */
async function failure(p: HttpProvider, path: string): Promise<ReservoirError> {
  const error = await rejection(p.read(`api://test/${path}`, ctx()));
  expect(error, path).toBeInstanceOf(ReservoirError);
  expectNoSecret(error);
  return error as ReservoirError;
}

function expectNoSecret(error: unknown): void {
  const e = error as ReservoirError;
  const seen = [
    e.message,
    JSON.stringify(e.data),
    String(e.stack),
    String((e.cause as Error | undefined)?.message ?? ''),
    JSON.stringify(logger.entries),
  ].join('\n');
  expect(seen).not.toContain('s3cr3t');
  expect(seen).not.toContain(API_KEY);
}

describe('http provider: upstream errors', () => {
  it('sends the configured headers (secrets included) with every request', async () => {
    const p = make();
    await p.read('api://test/ok', ctx());
    const sent = upstream.hits('/ok')[0]!.headers;
    expect(sent['authorization']).toBe(SECRET);
    expect(sent['x-api-key']).toBe(API_KEY);
  });

  it.each([
    [401, 's401'],
    [403, 's403'],
    [429, 's429'],
    [500, 's500'],
    [503, 's503'],
    [400, 's400'],
  ])(
    'maps HTTP %i to UnavailableError with the status, without the upstream body',
    async (status, path) => {
      const error = await failure(make(), path);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error.data).toMatchObject({ uri: `api://test/${path}`, status });
      expect(error.message).toContain(String(status));
    },
  );

  it('maps HTTP 410 to NotFoundError', async () => {
    expect(await failure(make(), 's410')).toBeInstanceOf(NotFoundError);
  });

  it('maps an unreachable upstream to UnavailableError', async () => {
    const closed = await Upstream.start();
    const port = closed.port;
    await closed.close();
    provider = providerFor(closed, {
      baseUrl: `http://127.0.0.1:${port}/`,
      headers: { Authorization: SECRET },
    });
    const error = await failure(provider, 'status');
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toContain('ECONNREFUSED');
  });
});

describe('http provider: deadline and size cap', () => {
  it('gives up on an upstream that never answers at the deadline, with the limit in the error', async () => {
    // /hang never answers: an error naming the 200 ms limit is the deadline firing.
    const error = await failure(make({ timeoutMs: 200 }), 'hang');
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.data).toMatchObject({ timeoutMs: 200 });
  });

  it('counts the body against the same deadline', async () => {
    const error = await failure(make({ timeoutMs: 300, maxResponseBytes: 1_000_000 }), 'trickle');
    expect(error.data).toMatchObject({ timeoutMs: 300 });
  });

  it('stays a cancellation when the client cancels, not an upstream failure', async () => {
    const p = make();
    const controller = new AbortController();
    const pending = p.read('api://test/hang', { signal: controller.signal });
    await eventually(() => upstream.hits('/hang').length > 0, 'the request to reach the upstream');
    controller.abort(new Error('client cancelled'));
    const error = await rejection(pending);
    expect((error as Error).message).toBe('client cancelled');
  });

  it('refuses a declared Content-Length over the cap with its size and the limit', async () => {
    const error = await failure(make(), 'declared-big');
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.data).toMatchObject({ size: 5000, limit: 1000 });
  });

  it('stops reading a streamed body at the cap: TooLargeError, never a truncated success', async () => {
    const error = await failure(make(), 'chunked-big');
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.data['limit']).toBe(1000);
    expect(error.data['size']).toBeGreaterThan(1000);
    expect(error.data['size']).toBeLessThanOrEqual(5000);
  });

  it('applies the cap to decompressed bytes (a gzip bomb stops early)', async () => {
    const error = await failure(make(), 'gzip-bomb');
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error.data['size']).toBeLessThan(1_000_000);
  });

  it('serves a body of exactly the cap, and decodes gzip', async () => {
    const p = make();
    expect(
      ((await p.read('api://test/exact', ctx())).contents[0] as { text: string }).text,
    ).toHaveLength(1000);
    expect(((await p.read('api://test/gzip-ok', ctx())).contents[0] as { text: string }).text).toBe(
      'compressed text',
    );
  });

  it('refuses a Content-Encoding it cannot decode', async () => {
    expect(await failure(make(), 'weird-encoding')).toBeInstanceOf(UnavailableError);
  });
});

describe('http provider: redirects', () => {
  it('follows same-origin redirects, relative and absolute', async () => {
    const p = make();
    for (const path of ['redirect-same', 'redirect-absolute-same']) {
      expect(
        ((await p.read(`api://test/${path}`, ctx())).contents[0] as { text: string }).text,
      ).toBe('fine');
    }
    expect(upstream.hits('/ok')).toHaveLength(2);
  });

  it('stops after maxRedirects', async () => {
    const error = await failure(make({ maxRedirects: 3 }), 'redirect-loop');
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toMatch(/too many/);
    expect(upstream.hits('/redirect-loop')).toHaveLength(4);
  });

  it.each([
    'redirect-other',
    'redirect-localhost',
    'redirect-https',
    'redirect-file',
    'redirect-scheme-relative',
  ])(
    'refuses a redirect that leaves the origin or HTTP(S) (%s), without following it',
    async (path) => {
      const error = await failure(make(), path);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error.message).toMatch(/redirected/);
      expect(other.requests).toHaveLength(0);
      expect(upstream.hits('/ok')).toHaveLength(0);
    },
  );

  it('never logged a secret while failing all of the above', () => {
    expectNoSecret(new ReservoirError('unavailable', 'check'));
  });
});
